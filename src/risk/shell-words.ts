// A parser of POSIX/bash shell words, good enough to see every command a
// line would run. It owns no policy: it turns a command line into the flat
// list of simple commands it contains (through pipelines, `;`, `&&`, `||`,
// `&`, subshells, brace groups and control words), each with its words and
// redirections, plus the text of every command substitution (`$(...)`,
// backticks, `<(...)`), which the classifier parses in turn.
//
// Invariant: when it is not sure it understood the line (unterminated quote,
// unbalanced parentheses, `case`, a here-document without its end), it
// throws ShellParseError rather than guess: the classifier then refuses to
// call the line read-only.

export class ShellParseError extends Error {
  override name = "ShellParseError";
}

export interface Word {
  /** The word after quote removal, with expansions left as written. */
  text: string;
  /** Contains an unquoted expansion ($x, ${x}, $(...)) or glob: its value is unknown here. */
  dynamic: boolean;
  /** Contains any expansion, quoted or not ("$x" too): its text is not what runs. */
  expanded?: boolean;
}

export interface Redirect {
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<<`, `<>`, `>&`, `<&`. */
  op: string;
  fd: number | undefined;
  target: Word;
  /** The body of a here-document (`<<`, `<<-`), as written. */
  body?: string;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** The command whose output this one reads through a pipe (`a | b`: b's is a). */
  pipedFrom?: SimpleCommand;
}

export interface ParsedLine {
  commands: SimpleCommand[];
  /** Source text of command and process substitutions, to be parsed too. */
  substitutions: string[];
}

const SEPARATORS = ["&&", "||", "|&", ";;", "|", ";", "&", "(", ")", "\n"];
const REDIRECT_OPS = ["&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", ">", "<"];

export function parseShell(input: string): ParsedLine {
  const commands: SimpleCommand[] = [];
  const substitutions: string[] = [];
  let i = 0;
  let depth = 0;
  let current: SimpleCommand = { words: [], redirects: [] };
  let pendingRedirect: { op: string; fd: number | undefined } | undefined;
  const heredocs: { delimiter: string; stripTabs: boolean; redirect: Redirect }[] = [];
  let lastFinished: SimpleCommand | undefined;
  let pendingPipe: SimpleCommand | undefined;

  const finishCommand = (piped = false) => {
    if (pendingRedirect) throw new ShellParseError(`redirection ${pendingRedirect.op} has no target`);
    const done = current.words.length > 0 || current.redirects.length > 0 ? current : undefined;
    if (done) commands.push(done);
    current = { words: [], redirects: [] };
    // `a | b`, also `(a) | b` and `a | (b)`: b reads what the last command before the pipe wrote.
    if (piped) {
      const from = done ?? lastFinished;
      if (from) current.pipedFrom = from;
      pendingPipe = from;
    } else if (done && pendingPipe && !done.pipedFrom) {
      done.pipedFrom = pendingPipe;
      pendingPipe = undefined;
    } else if (done) pendingPipe = undefined;
    if (done) lastFinished = done;
  };

  /** Reads a balanced `( ... )` body starting just after the opening paren; returns the body. */
  const readBalanced = (open: string, close: string): string => {
    const start = i;
    let level = 1;
    while (i < input.length) {
      const c = input[i];
      if (c === "\\") {
        i += 2;
        continue;
      }
      if (c === "'") {
        const end = input.indexOf("'", i + 1);
        if (end < 0) throw new ShellParseError("unterminated single quote inside a substitution");
        i = end + 1;
        continue;
      }
      if (c === '"') {
        i++;
        while (i < input.length && input[i] !== '"') i += input[i] === "\\" ? 2 : 1;
        if (i >= input.length) throw new ShellParseError("unterminated double quote inside a substitution");
        i++;
        continue;
      }
      if (c === open) level++;
      else if (c === close) {
        level--;
        if (level === 0) {
          i++;
          return input.slice(start, i - 1);
        }
      }
      i++;
    }
    throw new ShellParseError(`unbalanced ${open}${close}: no closing ${close}`);
  };

  /** Handles `$...` at input[i] === "$"; returns the literal text it stands for in the word. */
  const readDollar = (word: { text: string; dynamic: boolean; expanded?: boolean }, quoted: boolean) => {
    const next = input[i + 1];
    if (next === "(" && input[i + 2] === "(") {
      i += 3;
      const body = readBalanced("(", ")");
      if (input[i] !== ")") throw new ShellParseError("unterminated arithmetic expansion $((");
      i++;
      word.text += `$((${body}))`;
      substitutions.push(...innerSubstitutions(body));
      word.expanded = true;
      if (!quoted) word.dynamic = true;
      return;
    }
    if (next === "(") {
      i += 2;
      const body = readBalanced("(", ")");
      substitutions.push(body);
      word.text += `$(${body})`;
      word.expanded = true;
      if (!quoted) word.dynamic = true;
      return;
    }
    if (next === "{") {
      i += 2;
      const body = readBalanced("{", "}");
      word.text += `\${${body}}`;
      substitutions.push(...innerSubstitutions(body));
      word.expanded = true;
      if (!quoted) word.dynamic = true;
      return;
    }
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*|[0-9#?@*$!-])/.exec(input.slice(i));
    if (m) {
      i += m[0].length;
      word.text += m[0];
      word.expanded = true;
      if (!quoted) word.dynamic = true;
      return;
    }
    // A lone `$` (e.g. before a quote, $'...') is literal enough for us.
    if (next === "'") {
      i += 2;
      let text = "";
      while (i < input.length && input[i] !== "'") {
        if (input[i] === "\\") {
          text += input[i + 1] ?? "";
          i += 2;
        } else text += input[i++];
      }
      if (i >= input.length) throw new ShellParseError("unterminated $'...' quote");
      i++;
      word.text += text;
      return;
    }
    word.text += "$";
    i++;
  };

  const readBacktick = (word: { text: string; dynamic: boolean; expanded?: boolean }, quoted: boolean) => {
    i++;
    let body = "";
    while (i < input.length && input[i] !== "`") {
      if (input[i] === "\\" && i + 1 < input.length) {
        body += input[i + 1];
        i += 2;
      } else body += input[i++];
    }
    if (i >= input.length) throw new ShellParseError("unterminated backtick command substitution");
    i++;
    substitutions.push(body);
    word.text += `\`${body}\``;
    word.expanded = true;
    if (!quoted) word.dynamic = true;
  };

  const readHeredocBodies = () => {
    for (const doc of heredocs.splice(0)) {
      const lines: string[] = [];
      for (;;) {
        if (i >= input.length) throw new ShellParseError(`here-document ends before its delimiter ${doc.delimiter}`);
        const nl = input.indexOf("\n", i);
        const lineEnd = nl < 0 ? input.length : nl;
        let line = input.slice(i, lineEnd);
        if (doc.stripTabs) line = line.replace(/^\t+/, "");
        i = nl < 0 ? input.length : nl + 1;
        if (line === doc.delimiter) break;
        lines.push(line);
      }
      doc.redirect.body = lines.join("\n");
    }
  };

  const pushWord = (word: Word) => {
    if (pendingRedirect) {
      const r = pendingRedirect;
      pendingRedirect = undefined;
      const redirect: Redirect = { op: r.op, fd: r.fd, target: word };
      current.redirects.push(redirect);
      if (r.op === "<<" || r.op === "<<-") heredocs.push({ delimiter: word.text, stripTabs: r.op === "<<-", redirect });
      return;
    }
    current.words.push(word);
  };

  while (i < input.length) {
    const c = input[i];
    if (c === " " || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if (c === "\\" && input[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (c === "#") {
      while (i < input.length && input[i] !== "\n") i++;
      continue;
    }
    // Process substitution <(...) / >(...).
    if ((c === "<" || c === ">") && input[i + 1] === "(") {
      i += 2;
      const body = readBalanced("(", ")");
      substitutions.push(body);
      pushWord({ text: `${c}(${body})`, dynamic: true, expanded: true });
      continue;
    }
    const sep = SEPARATORS.find((s) => input.startsWith(s, i));
    if (sep) {
      if (sep === ";;") throw new ShellParseError("`case` statements are not understood");
      i += sep.length;
      finishCommand(sep === "|" || sep === "|&");
      if (sep === "(") depth++;
      if (sep === ")") {
        depth--;
        if (depth < 0) throw new ShellParseError("unbalanced parentheses: `)` without `(`");
      }
      if (sep === "\n") readHeredocBodies();
      continue;
    }
    const redirect = REDIRECT_OPS.find((op) => input.startsWith(op, i));
    if (redirect) {
      if (pendingRedirect) throw new ShellParseError(`redirection ${pendingRedirect.op} has no target`);
      i += redirect.length;
      pendingRedirect = { op: redirect, fd: undefined };
      continue;
    }
    // A word.
    const word: Word = { text: "", dynamic: false };
    let fdCandidate = true;
    let wasFd = false;
    while (i < input.length) {
      const ch = input[i]!;
      if (" \t\r\n;&|()<>".includes(ch)) {
        if ((ch === "<" || ch === ">") && fdCandidate && /^\d+$/.test(word.text) && !pendingRedirect) {
          const op = REDIRECT_OPS.find((o) => input.startsWith(o, i)) ?? ch;
          i += op.length;
          pendingRedirect = { op, fd: Number(word.text) };
          wasFd = true;
          break;
        }
        break;
      }
      fdCandidate = fdCandidate && /\d/.test(ch);
      if (ch === "\\") {
        if (input[i + 1] === "\n") {
          i += 2;
          continue;
        }
        word.text += input[i + 1] ?? "";
        i += 2;
      } else if (ch === "'") {
        const end = input.indexOf("'", i + 1);
        if (end < 0) throw new ShellParseError("unterminated single quote");
        word.text += input.slice(i + 1, end);
        i = end + 1;
      } else if (ch === '"') {
        i++;
        while (i < input.length && input[i] !== '"') {
          const d = input[i];
          if (d === "\\" && i + 1 < input.length) {
            const e = input[i + 1]!;
            word.text += '$`"\\\n'.includes(e) ? (e === "\n" ? "" : e) : `\\${e}`;
            i += 2;
          } else if (d === "$") readDollar(word, true);
          else if (d === "`") readBacktick(word, true);
          else word.text += input[i++];
        }
        if (i >= input.length) throw new ShellParseError("unterminated double quote");
        i++;
      } else if (ch === "$") readDollar(word, false);
      else if (ch === "`") readBacktick(word, false);
      else {
        if (ch === "*" || ch === "?" || ch === "[") word.dynamic = true;
        // `~` and `~user` at the start expand to a home directory.
        if (ch === "~" && word.text === "") word.expanded = true;
        word.text += ch;
        i++;
      }
    }
    if (wasFd) continue; // the digits were an io-number: `2>`
    pushWord(word);
  }
  if (depth !== 0) throw new ShellParseError("unbalanced parentheses: `(` without `)`");
  finishCommand();
  if (heredocs.length > 0) throw new ShellParseError(`here-document ${heredocs[0]!.delimiter} has no body`);
  return { commands, substitutions };
}

/**
 * Command substitutions inside `${...}` and `$((...))` bodies
 * (`${x:-$(reboot)}`, `$((a[$(reboot)]))`): they run too. A body this cannot
 * take apart is handed back whole, unbalanced, so that the classifier cannot
 * read it and never calls it read-only.
 */
export function innerSubstitutions(body: string): string[] {
  const found: string[] = [];
  for (let at = 0; at < body.length; at++) {
    if (body[at] === "`") {
      const end = body.indexOf("`", at + 1);
      if (end < 0) return [`$(${body}`];
      found.push(body.slice(at + 1, end));
      at = end;
    } else if (body.startsWith("$(", at)) {
      let level = 0;
      let end = at + 1;
      for (; end < body.length; end++) {
        if (body[end] === "(") level++;
        else if (body[end] === ")" && --level === 0) break;
      }
      if (end >= body.length) return [`$(${body}`];
      found.push(body.slice(at + 2, end));
      at = end;
    }
  }
  return found;
}
