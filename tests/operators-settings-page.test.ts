// The settings page's operators section in a real browser (Debian's
// chromium via playwright-core) against the real API on real PostgreSQL: an
// admin adds a viewer, makes them an operator and removes them (after the
// confirm); the server's refusals (a guessable password, demoting the last
// admin) are shown in plain words and a refused role change does not stay
// in its select; an operator does not see the section at all.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { operatorCreate } from "../src/auth/operators.js";
import { ARTIFACTS, type BrowserSession, openSignedIn, type ServedApi, serveApi } from "./helpers/browser.js";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();
let api: ServedApi;
let browser: BrowserSession | undefined;

const roleOf = async (username: string) =>
  (await t.db.kysely.selectFrom("operators").select("role").where("username", "=", username).executeTakeFirst())?.role;

beforeAll(async () => {
  api = await serveApi(t.db, t.url);
  // The first operator is the admin.
  await operatorCreate(t.db.kysely, { username: "alice", password: "correct horse battery", actor: "system:test" });
  await operatorCreate(t.db.kysely, { username: "olga", password: "correct horse battery", actor: "system:test", role: "operator" });
});
afterEach(async () => {
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await api.close();
});

describe("the settings page's operators section", () => {
  it("an admin adds a viewer, makes them an operator and removes them", async () => {
    browser = await openSignedIn(api.url);
    const { page } = browser;
    await page.click("text=Settings");
    await page.waitForSelector(".operators-settings tr.operator[data-username=alice]");
    expect(await page.locator("tr.operator[data-username=alice]").textContent()).toContain("(you)");
    expect(await page.locator("tr.operator[data-username=alice] button").count()).toBe(0);

    // A guessable password: the server's reason, in plain words, by the form.
    await page.getByLabel("Username").fill("vera");
    await page.getByLabel("Password (a few unrelated words)").fill("password123");
    await page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await page.click("text=Add operator");
    await page.waitForSelector(".operator-add .form-error:has-text('Password is too easy to guess')");
    await page.getByLabel("Password (a few unrelated words)").fill("tangerine orbit kettle");
    await page.click("text=Add operator");
    await page.waitForSelector("tr.operator[data-username=vera]");
    expect(await page.locator(".operator-add .form-error").count()).toBe(0);
    expect(await roleOf("vera")).toBe("viewer");
    expect(await page.getByLabel("Role of vera").inputValue()).toBe("viewer");

    await page.getByLabel("Role of vera").selectOption("operator");
    await page.waitForFunction(() => !document.querySelector(".operators-settings .form-error"));
    await expect.poll(() => roleOf("vera")).toBe("operator");

    // Demoting the last admin is refused, said why, and the select shows admin again.
    await page.getByLabel("Role of alice").selectOption("viewer");
    await page.waitForSelector(".operators-settings > .form-error:has-text('Nomos needs an admin, and alice is the last one')");
    await page.waitForFunction(
      () => (document.querySelector("select[aria-label='Role of alice']") as HTMLSelectElement | null)?.value === "admin",
    );
    expect(await roleOf("alice")).toBe("admin");

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "operators-settings.png"), fullPage: true });

    const asked: string[] = [];
    page.once("dialog", (d) => {
      asked.push(d.message());
      void d.accept();
    });
    await page.getByRole("button", { name: "Remove vera" }).click();
    await page.waitForSelector("tr.operator[data-username=vera]", { state: "detached" });
    expect(asked).toEqual(["Remove vera? Their logins end at once; their sessions and the audit trail stay."]);
    expect(await roleOf("vera")).toBeUndefined();
  });

  it("is not shown to an operator", async () => {
    browser = await openSignedIn(api.url, { username: "olga" });
    const { page } = browser;
    await page.click("text=Settings");
    // Both sections render in the same pass: once notifications is there, operators would be too.
    await page.waitForSelector(".notify-settings");
    expect(await page.locator(".operators-settings").count()).toBe(0);
  });
});
