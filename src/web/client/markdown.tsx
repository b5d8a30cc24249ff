/** @jsxImportSource hono/jsx/dom */
// A small Markdown renderer for the agent's replies that never produces HTML
// from its input: it builds elements whose text is set as text, so `<img
// src=x onerror=...>` in model text shows as those characters and runs
// nothing. Covers what an operations chat needs: paragraphs, headings,
// lists, fenced code, inline code, bold, italics, and http(s) links.
// Anything it does not understand is shown as it was written.
import type { Child } from "hono/jsx";

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*)|(\[[^\]\n]+\]\(https?:\/\/[^\s)]+\))/;

function inline(text: string): Child[] {
  const out: Child[] = [];
  let rest = text;
  while (rest.length > 0) {
    const m = INLINE.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const tok = m[0];
    if (m[1]) out.push(<code>{tok.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong>{inline(tok.slice(2, -2))}</strong>);
    else if (m[3]) out.push(<em>{inline(tok.slice(1, -1))}</em>);
    else {
      const close = tok.indexOf("](");
      const href = tok.slice(close + 2, -1);
      out.push(
        <a href={href} target="_blank" rel="noopener noreferrer nofollow">
          {tok.slice(1, close)}
        </a>,
      );
    }
    rest = rest.slice(m.index + tok.length);
  }
  return out;
}

export function Markdown({ text }: { text: string }) {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const blocks: Child[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = /^\s*```(.*)$/.exec(line);
    if (fence) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```\s*$/.test(lines[i]!)) code.push(lines[i++]!);
      i++; // the closing fence (or the end of a reply still streaming)
      blocks.push(
        <pre class="code">
          <code>{code.join("\n")}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,4})\s+(.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const body = inline(heading[2]!);
      blocks.push(level <= 2 ? <h3>{body}</h3> : <h4>{body}</h4>);
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d+[.)]\s+/.test(line);
      const items: Child[] = [];
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i]!)) {
        items.push(<li>{inline(lines[i]!.replace(/^\s*([-*+]|\d+[.)])\s+/, ""))}</li>);
        i++;
      }
      blocks.push(ordered ? <ol>{items}</ol> : <ul>{items}</ul>);
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const para: string[] = [];
    while (
      i < lines.length &&
      lines[i]!.trim() !== "" &&
      !/^\s*```/.test(lines[i]!) &&
      !/^#{1,4}\s/.test(lines[i]!) &&
      !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i]!)
    ) {
      para.push(lines[i++]!);
    }
    const children: Child[] = [];
    para.forEach((p, k) => {
      if (k > 0) children.push(<br />);
      children.push(...inline(p));
    });
    blocks.push(<p>{children}</p>);
  }
  return <div class="md">{blocks}</div>;
}
