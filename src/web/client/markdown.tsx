/** @jsxImportSource hono/jsx/dom */
// The agent's replies as GitHub-flavoured Markdown (tables, nested lists,
// blockquotes, task lists, strikethrough, autolinks, fenced code), parsed by
// markdown-it with HTML disabled and turned into elements from its token
// stream, never into an HTML string. Invariants: `<img src=x onerror=…>`
// in model text shows as those characters and runs nothing (html: false,
// and the text of every token is set as text); only http(s) and mailto
// links become links (anything else, javascript: included, stays text);
// images are shown as links to them, not loaded; attributes come from a
// short list (href, start, a cell's alignment as a class), never from the
// input. Headings are demoted under the chat's own (h3 and below).
import type { Child } from "hono/jsx";
import MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";
import { CodeBlock } from "./code-block.js";

const md = new MarkdownIt("default", { html: false, linkify: true, breaks: true, typographer: false });
md.validateLink = (url: string) => /^(https?:|mailto:)/i.test(url.trim());
// Only addresses with their scheme become links: "docker.io" is a package, not a website.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

const HEADING: Record<string, string> = { h1: "h3", h2: "h3", h3: "h4", h4: "h5", h5: "h6", h6: "h6" };
const ALLOWED = new Set([
  "p",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "strong",
  "em",
  "s",
  "a",
  "hr",
  "br",
  "code",
]);

interface Frame {
  tag: string;
  props: Record<string, string | boolean>;
  children: Child[];
}

function propsOf(t: Token): Record<string, string | boolean> {
  const props: Record<string, string | boolean> = {};
  if (t.tag === "a") {
    props.href = t.attrGet("href") ?? "#";
    props.target = "_blank";
    props.rel = "noopener noreferrer nofollow";
  }
  if (t.tag === "ol") {
    const start = Number(t.attrGet("start"));
    if (Number.isInteger(start) && start > 1) props.start = String(start);
  }
  if (t.tag === "th" || t.tag === "td") {
    const align = /text-align:(left|right|center)/.exec(t.attrGet("style") ?? "")?.[1];
    if (align) props.class = `align-${align}`;
  }
  return props;
}

function element(f: Frame): Child {
  const Tag = (ALLOWED.has(f.tag) ? f.tag : "span") as "span";
  if (f.tag === "table") {
    return (
      <div class="table-wrap">
        <table>{f.children}</table>
      </div>
    );
  }
  return <Tag {...f.props}>{f.children}</Tag>;
}

function build(tokens: Token[]): Child[] {
  const root: Frame = { tag: "", props: {}, children: [] };
  const stack: Frame[] = [root];
  const top = () => stack[stack.length - 1]!;
  for (const t of tokens) {
    if (t.nesting === 1) {
      // A tight list's paragraphs are hidden: their text goes straight into the item.
      if (!t.hidden) stack.push({ tag: HEADING[t.tag] ?? t.tag, props: propsOf(t), children: [] });
      continue;
    }
    if (t.nesting === -1) {
      if (!t.hidden && stack.length > 1) {
        const done = stack.pop()!;
        top().children.push(element(done));
      }
      continue;
    }
    switch (t.type) {
      case "inline":
        top().children.push(...build(t.children ?? []));
        break;
      case "code_inline":
        top().children.push(<code>{t.content}</code>);
        break;
      case "softbreak":
      case "hardbreak":
        top().children.push(<br />);
        break;
      case "hr":
        top().children.push(<hr />);
        break;
      case "fence":
      case "code_block":
        top().children.push(<CodeBlock code={t.content.replace(/\n$/, "")} language={(t.info ?? "").trim().split(/\s+/)[0] ?? ""} />);
        break;
      case "image": {
        const src = t.attrGet("src") ?? "";
        const alt = t.content || src;
        top().children.push(
          md.validateLink(src) ? (
            <a href={src} target="_blank" rel="noopener noreferrer nofollow">
              {`🖼 ${alt}`}
            </a>
          ) : (
            alt
          ),
        );
        break;
      }
      default:
        // text, and anything else (html tokens cannot occur with html: false): its characters, as text.
        if (t.content) top().children.push(t.content);
    }
  }
  while (stack.length > 1) {
    const open = stack.pop()!;
    top().children.push(element(open));
  }
  return root.children;
}

/** GFM task list items ("[ ] ", "[x] " at an item's start) read as ☐ and ☑: shown, not edited. */
function taskLists(tokens: Token[]): Token[] {
  for (let i = 2; i < tokens.length; i++) {
    const first = tokens[i]!.type === "inline" && tokens[i - 2]?.type === "list_item_open" ? tokens[i]!.children?.[0] : undefined;
    const m = first?.type === "text" ? /^\[([ xX])\] /.exec(first.content) : null;
    if (first && m) first.content = `${m[1] === " " ? "☐" : "☑"} ${first.content.slice(4)}`;
  }
  return tokens;
}

export function Markdown({ text }: { text: string }) {
  return <div class="md">{build(taskLists(md.parse(text, {})))}</div>;
}
