// The network of a simulated container: ip route/addr (and adding a
// default route), and curl to its own services or the outside. Invariant:
// the outside answers only through the LAN router and a resolver that
// works (container-state.ts: online, dnsWorks).

import type { ShellIo } from "./container-files.js";
import { type ContainerState, dnsWorks, listener } from "./container-state.js";

export function ip(ct: ContainerState, args: string[], io: ShellIo): number {
  const [object = "", sub, ...rest] = args.filter((a) => !["-4", "-br", "-c"].includes(a));
  if (object.startsWith("r")) {
    if (sub === "add" || sub === "replace") {
      const via = rest[rest.indexOf("via") + 1];
      if (rest[0] !== "default" || !via) {
        io.err("Error: only default routes are simulated.\n");
        return 2;
      }
      if (sub === "add" && ct.gateway !== null) {
        io.err("RTNETLINK answers: File exists\n");
        return 2;
      }
      ct.gateway = via;
      return 0;
    }
    if (sub === "del" || sub === "delete") {
      ct.gateway = null;
      return 0;
    }
    const net = ct.address.replace(/\.\d+\/24$/, ".0/24");
    if (ct.gateway) io.out(`default via ${ct.gateway} dev eth0 onlink\n`);
    io.out(`${net} dev eth0 proto kernel scope link src ${ct.address.split("/")[0]}\n`);
    return 0;
  }
  if (object.startsWith("a")) {
    io.out(
      `1: lo: <LOOPBACK,UP> mtu 65536\n    inet 127.0.0.1/8 scope host lo\n2: eth0@if12: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500\n    inet ${ct.address} brd ${ct.address.replace(/\.\d+\/24$/, ".255")} scope global eth0\n`,
    );
    return 0;
  }
  io.err(`Object "${object}" is unknown, try "ip help".\n`);
  return 1;
}

export function curl(ct: ContainerState, args: string[], io: ShellIo): number {
  const url = args.find((a) => /^(https?:\/\/|localhost|127\.)/.test(a)) ?? "";
  const m = /^(?:https?:\/\/)?([^/:]+)(?::(\d+))?/.exec(url);
  const host = m?.[1] ?? "";
  const port = Number(m?.[2] ?? (url.startsWith("https") ? 443 : 80));
  const silentFail = args.some((a) => /^-\w*f/.test(a));
  if (host === "localhost" || host.startsWith("127.") || host === ct.address.split("/")[0]) {
    const svc = listener(ct, port);
    if (!svc) {
      io.err(`curl: (7) Failed to connect to ${host} port ${port} after 0 ms: Couldn't connect to server\n`);
      return 7;
    }
    if (!args.includes("-o") && !args.includes("-I")) io.out(`${svc.body ?? "OK"}\n`);
    if (args.includes("-I")) io.out("HTTP/1.1 200 OK\n");
    return 0;
  }
  if (!dnsWorks(ct)) {
    io.err(`curl: (6) Could not resolve host: ${host}\n`);
    return 6;
  }
  if (/evil|attacker/.test(host)) {
    if (silentFail) io.err("curl: (22) The requested URL returned error: 404\n");
    return 22;
  }
  io.out("<html>ok</html>\n");
  return 0;
}
