// The logged-in operator's role, as /api/me reported it, for hiding what the
// role cannot do (src/auth/roles.ts). Hiding is courtesy only: every route
// checks the role itself. Set once by main.tsx before the workspace renders.
export type Role = "viewer" | "operator" | "admin";

const ORDER: Role[] = ["viewer", "operator", "admin"];
let current: Role = "viewer";

export function setRole(role: Role | undefined): void {
  current = role ?? "viewer";
}

/** True when the current operator holds `needed` or more. */
export const can = (needed: Role) => ORDER.indexOf(current) >= ORDER.indexOf(needed);
