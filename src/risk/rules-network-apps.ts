// Rules for firewalls (iptables, nft, ufw), containers (docker, podman,
// docker compose, with docker exec looked through) and databases (psql,
// mysql, redis-cli).
import { afterOptions, cm, de, has, merge, positional, type Rule, ro, texts } from "./rule-kit.js";
import { sqlArgs, sqlRisk } from "./sql.js";

export function registerNetworkAndAppRules(rules: Map<string, Rule>): void {
  // ─── firewall ──────────────────────────────────────────────────────────────

  const iptablesRule: Rule = (args, _ctx, name) =>
    has(args, "-L", "-S", "--list", "--list-rules", "-C", "--check") && !has(args, "-F", "-A", "-I", "-D", "-X", "-P", "-Z")
      ? ro()
      : cm(`\`${name}\` changes firewall rules`);
  for (const name of ["iptables", "ip6tables", "ebtables", "arptables"]) rules.set(name, iptablesRule);
  rules.set("nft", (args) =>
    positional(args)[0]?.text === "list" || has(args, "--check", "-c") ? ro() : cm("`nft` changes firewall rules"),
  );
  rules.set("ufw", (args) => (["status", "show", "version"].includes(args[0]?.text ?? "") ? ro() : cm("`ufw` changes firewall rules")));
  rules.set("pve-firewall", (args) =>
    ["status", "compile", "localnet", "simulate"].includes(args[0]?.text ?? "") ? ro() : cm("`pve-firewall` changes the firewall"),
  );

  // ─── containers ────────────────────────────────────────────────────────────

  const dockerRule: Rule = (args, ctx, name) => {
    const rest = afterOptions(args, ["-H", "--host", "--context", "-c", "--config", "-l", "--log-level"]);
    let [obj, verb] = texts(rest);
    const objects = [
      "container",
      "image",
      "volume",
      "network",
      "system",
      "builder",
      "buildx",
      "plugin",
      "context",
      "node",
      "service",
      "stack",
      "secret",
      "config",
      "compose",
    ];
    if (obj === "compose") return composeRule(rest.slice(1), ctx, `${name} compose`);
    if (obj === "exec" || (obj === "container" && verb === "exec")) {
      const after = afterOptions(rest.slice(obj === "exec" ? 1 : 2), [
        "-u",
        "--user",
        "-w",
        "--workdir",
        "-e",
        "--env",
        "--env-file",
        "--detach-keys",
      ]);
      return after.length > 1 ? ctx.classifyWords(after.slice(1)) : cm("`docker exec` opens a shell in a container");
    }
    if (!objects.includes(obj ?? "")) verb = obj;
    else if (obj === "volume" && ["rm", "remove", "prune"].includes(verb ?? "")) return de(`\`docker volume ${verb}\` deletes volume data`);
    if (obj === "system" && verb === "prune")
      return has(rest, "--volumes")
        ? de("`docker system prune --volumes` deletes volume data")
        : cm("`docker system prune` removes unused objects");
    const readVerbs = [
      "ps",
      "ls",
      "list",
      "images",
      "logs",
      "inspect",
      "stats",
      "version",
      "info",
      "top",
      "port",
      "history",
      "df",
      "events",
      "diff",
      "search",
    ];
    if (verb === undefined || readVerbs.includes(verb)) return ro();
    return cm(`\`${name} ${texts(rest.slice(0, 2)).join(" ")}\` changes containers`);
  };
  const composeRule: Rule = (args, _ctx, name) => {
    const rest = afterOptions(args, ["-f", "--file", "-p", "--project-name", "--project-directory", "--env-file", "--profile", "--ansi"]);
    const verb = rest[0]?.text;
    if (verb === undefined || ["ps", "logs", "config", "ls", "images", "top", "version", "port", "events"].includes(verb)) return ro();
    if ((verb === "down" && has(rest, "-v", "--volumes")) || (verb === "rm" && has(rest, "-v", "--volumes")))
      return de(`\`${name} ${verb} -v\` deletes volume data`);
    return cm(`\`${name} ${verb}\` changes containers`);
  };
  rules.set("docker", dockerRule);
  rules.set("podman", dockerRule);
  rules.set("docker-compose", composeRule);

  // ─── databases ─────────────────────────────────────────────────────────────

  rules.set("psql", (args, ctx) => {
    const sqls = sqlArgs(args, ["-c", "--command"]);
    if (sqls.length > 0) return merge(...sqls.map((q) => sqlRisk(q, "psql")));
    if (has(args, "-l", "--list")) return ro();
    if (ctx.stdin.kind === "text") return merge(sqlRisk(ctx.stdin.text, "psql"), cm("`psql` runs SQL from its input"));
    return cm("`psql` runs SQL this check cannot see");
  });
  rules.set("mysql", (args, ctx) => {
    const sqls = sqlArgs(args, ["-e", "--execute"]);
    if (sqls.length > 0) return merge(...sqls.map((q) => sqlRisk(q, "mysql")));
    if (ctx.stdin.kind === "text") return merge(sqlRisk(ctx.stdin.text, "mysql"), cm("`mysql` runs SQL from its input"));
    return cm("`mysql` runs SQL this check cannot see");
  });
  rules.set("mariadb", rules.get("mysql")!);
  rules.set("dropdb", () => de("`dropdb` deletes a database"));
  rules.set("pg_dump", (args) => (has(args, "-f", "--file") ? cm("`pg_dump` writes a file") : ro()));
  rules.set("redis-cli", (args) => {
    const words = texts(args).map((t) => t.toLowerCase());
    if (words.some((w) => w === "flushall" || w === "flushdb")) return de("`redis-cli` flushes data");
    const cmd = words.find((w, idx) => !w.startsWith("-") && !["-h", "-p", "-a", "-n"].includes(words[idx - 1] ?? ""));
    return cmd === undefined ||
      ["get", "info", "keys", "scan", "ping", "ttl", "type", "exists", "mget", "hgetall", "lrange", "dbsize", "monitor"].includes(cmd)
      ? ro()
      : cm(`\`redis-cli ${cmd}\` changes data`);
  });
}
