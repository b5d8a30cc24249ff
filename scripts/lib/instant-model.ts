// The instant Messages API double of bench:peers, in a process of its own so
// its CPU is not counted as Nomos's: it answers every request at once with
// one short text block, and for each request prints one line to stdout,
// `<epoch ms, high resolution> <execution ids the request's last message names>`,
// so the benchmark can tell when a continuation turn reached the model.
// The first line is the double's URL. Invariant: loopback only.
import { startMessagesDouble } from "../../src/model-double/messages-double.js";
import { requestText } from "../../src/model-double/request-blocks.js";

const now = () => performance.timeOrigin + performance.now();
const ID = /execution ([0-9a-f-]{36}) /g;

const double = await startMessagesDouble({
  host: "127.0.0.1",
  policy: (request) => {
    const t = now();
    const last = request.messages.at(-1);
    const ids = last ? [...requestText(last.content).matchAll(ID)].map((m) => m[1]) : [];
    process.stdout.write(`${t.toFixed(3)} ${ids.join(" ")}\n`);
    return { content: [{ type: "text", text: "noted" }] };
  },
});
process.stdout.write(`${double.url}\n`);
const stop = () => void double.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
