// Light or dark: the page follows the system (prefers-color-scheme) until
// the operator picks one with the toggle; the pick is kept in localStorage
// and set as data-theme on <html>, which theme.css reads. Invariant: with
// no pick stored, no data-theme is set, so the system's choice applies,
// also when it changes while the page is open.
export type Theme = "light" | "dark";

const KEY = "nomos.theme";

export function themeStored(): Theme | null {
  try {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : null;
  } catch {
    return null;
  }
}

/** The theme in effect: the stored pick, else the system's. */
export function themeCurrent(): Theme {
  return themeStored() ?? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
}

export function themeApply(): void {
  const pick = themeStored();
  if (pick) document.documentElement.dataset.theme = pick;
  else delete document.documentElement.dataset.theme;
}

export function themeSet(theme: Theme): void {
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // not kept: it still applies to this page
  }
  document.documentElement.dataset.theme = theme;
}
