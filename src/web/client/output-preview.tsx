/** @jsxImportSource hono/jsx/dom */
// A command's output, readable at any length: up to PREVIEW_LINES lines are
// shown whole; a longer one shows its first and last lines around a count
// of what is hidden, with "Show all", Copy and Download (a .txt file). The
// text is always set as text.
import { useState } from "hono/jsx/dom";
import { downloadText } from "./clipboard.js";
import { CopyButton } from "./code-block.js";

const PREVIEW_LINES = 12;
const HEAD = 5;
const TAIL = 5;

export function OutputPreview({ text, name }: { text: string; name: string }) {
  const [all, setAll] = useState(false);
  const lines = text.replace(/\n$/, "").split("\n");
  const long = lines.length > PREVIEW_LINES;
  return (
    <div class="output-box">
      {long && !all ? (
        <pre class="output preview">
          {lines.slice(0, HEAD).join("\n")}
          <span class="omitted">{`\n⋯ ${lines.length - HEAD - TAIL} more lines ⋯\n`}</span>
          {lines.slice(-TAIL).join("\n")}
        </pre>
      ) : (
        <pre class="output">{text}</pre>
      )}
      <div class="output-actions">
        {long && (
          <button type="button" class="btn small" aria-expanded={all} onClick={() => setAll(!all)}>
            {all ? "Show less" : `Show all ${lines.length} lines`}
          </button>
        )}
        <CopyButton text={text} label="Copy output" />
        <button type="button" class="btn small" onClick={() => downloadText(`${name}.txt`, text)}>
          Download
        </button>
      </div>
    </div>
  );
}
