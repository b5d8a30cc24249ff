/** @jsxImportSource hono/jsx/dom */
/// <reference lib="dom" />
// The settings page's operators section (#/settings), an admin's only
// (main.tsx shows it when can("admin")): every operator with a role select
// and Remove (after a confirm), and a form to add one. The server keeps the
// rules (never zero admins, nobody removes themself: auth/operator-accounts.ts)
// and says why it refuses; this shows its words, and the list as the server
// has it after every change, so a refused change never lingers in a select.

import { useEffect, useState } from "hono/jsx/dom";
import type { OperatorView } from "../../auth/operator-accounts.js";
import { api, humanError } from "./api.js";
import type { Role } from "./role.js";

const ROLES: Role[] = ["viewer", "operator", "admin"];

const value = (e: Event) => (e.target as HTMLInputElement | HTMLSelectElement).value;

function RoleOptions({ selected }: { selected: Role }) {
  return (
    <>
      {ROLES.map((r) => (
        <option value={r} selected={r === selected}>
          {r}
        </option>
      ))}
    </>
  );
}

function AddOperator({ onAdded }: { onAdded(): void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("operator");
  const [error, setError] = useState("");
  return (
    <form
      class="operator-add"
      onSubmit={async (e: Event) => {
        e.preventDefault();
        setError("");
        try {
          await api("POST", "/api/operators", { username, password, role });
          setUsername("");
          setPassword("");
          onAdded();
        } catch (err) {
          setError(humanError(err));
        }
      }}
    >
      <h3>Add an operator</h3>
      <label>
        Username
        <input name="operator-username" autocomplete="off" value={username} onInput={(e: Event) => setUsername(value(e))} />
      </label>
      <label>
        Password (a few unrelated words)
        <input
          name="operator-password"
          type="password"
          autocomplete="new-password"
          value={password}
          onInput={(e: Event) => setPassword(value(e))}
        />
      </label>
      {/* Labelled by for/id: a wrapping label would make the name "Role operator". */}
      <div class="field">
        <label for="operator-add-role">Role</label>
        <select id="operator-add-role" name="operator-role" onChange={(e: Event) => setRole(value(e) as Role)}>
          <RoleOptions selected={role} />
        </select>
      </div>
      {error && (
        <div class="form-error" role="alert">
          {error}
        </div>
      )}
      <div class="notify-actions">
        <button class="btn small primary" type="submit">
          Add operator
        </button>
      </div>
    </form>
  );
}

export function OperatorSettings({ self }: { self: string }) {
  const [operators, setOperators] = useState<OperatorView[]>([]);
  const [error, setError] = useState("");
  const load = async () => setOperators((await api<{ operators: OperatorView[] }>("GET", "/api/operators")).operators);
  const act = async (work: () => Promise<unknown>, undo?: () => void) => {
    setError("");
    try {
      await work();
    } catch (err) {
      setError(humanError(err));
      undo?.();
    }
    await load().catch((err) => setError(humanError(err)));
  };
  useEffect(() => {
    void load().catch((err) => setError(humanError(err)));
  }, []);
  return (
    <section class="settings operators-settings">
      <h2>Operators</h2>
      <p class="sub">
        Viewers read; operators also chat, start sessions and approve plans; admins also confirm destructive steps and manage operators. A
        role change holds from the operator's next click; removing one ends their logins at once and keeps their sessions.
      </p>
      <table class="operators-list">
        <thead>
          <tr>
            <th>Username</th>
            <th>Role</th>
            <th class="added">Added</th>
            <th>Last login</th>
            <th>
              <span class="sr-only">Remove</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {operators.map((o) => (
            <tr class="operator" data-username={o.username}>
              <td>
                {o.username}
                {o.username === self && <span class="you"> (you)</span>}
              </td>
              <td>
                <select
                  aria-label={`Role of ${o.username}`}
                  onChange={(e: Event) => {
                    const select = e.target as HTMLSelectElement;
                    void act(
                      async () => {
                        await api("PATCH", `/api/operators/${o.id}`, { role: select.value });
                        // Your own role changed: the page redraws for it.
                        if (o.username === self) location.reload();
                      },
                      // Refused: the list is unchanged, so no redraw would put the role back.
                      () => {
                        select.value = o.role;
                      },
                    );
                  }}
                >
                  <RoleOptions selected={o.role} />
                </select>
              </td>
              <td class="added">{new Date(o.createdAt).toLocaleString()}</td>
              <td>{o.lastLoginAt ? new Date(o.lastLoginAt).toLocaleString() : "never"}</td>
              <td>
                {o.username !== self && (
                  <button
                    class="btn small danger-outline"
                    type="button"
                    aria-label={`Remove ${o.username}`}
                    onClick={() => {
                      if (!confirm(`Remove ${o.username}? Their logins end at once; their sessions and the audit trail stay.`)) return;
                      void act(() => api("DELETE", `/api/operators/${o.id}`));
                    }}
                  >
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {error && (
        <div class="form-error" role="alert">
          {error}
        </div>
      )}
      <AddOperator onAdded={() => void load().catch((err) => setError(humanError(err)))} />
    </section>
  );
}
