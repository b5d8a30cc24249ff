/** @jsxImportSource hono/jsx/dom */
// A fenced code block of a reply: its language as a label, a Copy button,
// and light highlighting (highlight.ts) when the language is one we know.
// The code is always set as text.
import type { Child } from "hono/jsx";
import { useState } from "hono/jsx/dom";
import { copyText } from "./clipboard.js";
import { type Highlighted, highlight, languageLabel } from "./highlight.js";

function pieces(h: Highlighted[]): Child[] {
  return h.map((p) =>
    typeof p === "string" ? p : p.scope ? <span class={`hljs-${p.scope}`}>{pieces(p.children)}</span> : pieces(p.children),
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState("");
  return (
    <button
      type="button"
      class="btn small copy"
      onClick={async () => {
        setDone((await copyText(text)) ? "Copied" : "Copy failed");
        setTimeout(() => setDone(""), 1500);
      }}
    >
      {done || label}
    </button>
  );
}

export function CodeBlock({ code, language }: { code: string; language: string }) {
  const highlighted = highlight(code, language);
  return (
    <div class="code-block">
      <div class="code-head">
        <span class="code-lang">{language ? languageLabel(language) : "text"}</span>
        <CopyButton text={code} />
      </div>
      <pre class="code">
        <code class="hljs">{highlighted ? pieces(highlighted) : code}</code>
      </pre>
    </div>
  );
}
