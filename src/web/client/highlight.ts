// A light syntax highlighter for the code blocks of replies: highlight.js's
// core with the languages an operations chat shows (shell, JSON, YAML, INI
// and TOML, Dockerfile, nginx, SQL, diff). Invariant: no HTML is ever
// produced or parsed: highlight.js's token tree (its emitter's root node:
// strings and {scope, children}) is walked into spans whose text is set as
// text, so a hostile code block stays characters.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import ini from "highlight.js/lib/languages/ini";
import json from "highlight.js/lib/languages/json";
import nginx from "highlight.js/lib/languages/nginx";
import sql from "highlight.js/lib/languages/sql";
import yaml from "highlight.js/lib/languages/yaml";

for (const [name, lang] of Object.entries({ bash, diff, dockerfile, ini, json, nginx, sql, yaml })) hljs.registerLanguage(name, lang);
hljs.registerAliases(["sh", "shell", "console", "zsh"], { languageName: "bash" });
hljs.registerAliases(["toml", "conf", "cfg", "env"], { languageName: "ini" });

/** A piece of highlighted code: plain text, or a scope (a class name) around pieces. */
export type Highlighted = string | { scope: string; children: Highlighted[] };

interface TreeNode {
  scope?: string;
  kind?: string;
  children?: (TreeNode | string)[];
}

function fromTree(node: TreeNode | string): Highlighted {
  if (typeof node === "string") return node;
  const children = (node.children ?? []).map(fromTree);
  const scope = node.scope ?? node.kind;
  return scope ? { scope: scope.split(/[.:]/)[0]!, children } : { scope: "", children };
}

/** The code as highlighted pieces, or null when the language is not one of ours (the block stays plain). */
export function highlight(code: string, language: string): Highlighted[] | null {
  const name = language.toLowerCase();
  if (!name || !hljs.getLanguage(name)) return null;
  try {
    const result = hljs.highlight(code, { language: name, ignoreIllegals: true }) as unknown as { _emitter?: { rootNode?: TreeNode } };
    const root = result._emitter?.rootNode;
    return root ? (root.children ?? []).map(fromTree) : null;
  } catch {
    return null;
  }
}

/** The language's display name ("bash" for sh), or what the fence said. */
export function languageLabel(language: string): string {
  const lang = hljs.getLanguage(language.toLowerCase());
  return lang?.name ?? language;
}
