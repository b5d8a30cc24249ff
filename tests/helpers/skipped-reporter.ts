// A vitest reporter that closes the run with one line naming every suite
// that was skipped, with the suite's own name (which says what it needs and
// the command that installs it, e.g. ssh-openssh.test.ts). Under CI=true a
// skip is a failure: CI installs everything, so a skip there means a
// missing install step, not a missing program.
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

export default class SkippedReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: string[] = [];
    for (const module of testModules) {
      const names = new Set<string>();
      for (const test of module.children.allTests("skipped")) {
        names.add(test.parent.type === "suite" ? test.parent.name : test.name);
      }
      if (names.size > 0) skipped.push(`${relative(process.cwd(), module.moduleId)} (${[...names].join("; ")})`);
    }
    if (skipped.length === 0) return;
    const ci = process.env.CI === "true" || process.env.CI === "1";
    process.stdout.write(`\nskipped suites: ${skipped.join(", ")}${ci ? " — CI=true: nothing may be skipped, failing the run" : ""}\n`);
    if (ci) process.exitCode = 1;
  }
}
