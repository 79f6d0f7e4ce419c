import assert from "node:assert/strict";
import { DEFAULT_PRIVATE_PATTERNS, PrivatePaths } from "./private.ts";

Deno.test("private: the defaults are exactly those of docs/contract.md §3.2", () => {
  assert.deepEqual(DEFAULT_PRIVATE_PATTERNS, [
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    ".npmrc",
    ".netrc",
    ".pypirc",
    "**/secrets/**",
    "**/credentials*",
  ]);
});

Deno.test("private: default patterns mark secrets priv at any depth, and nothing else", () => {
  const p = new PrivatePaths();
  const priv = [
    ".env",
    "app/.env",
    ".env.local",
    "deploy/.env.production",
    "certs/server.pem",
    "tls.key",
    "id_rsa",
    "home/.ssh/id_rsa.pub",
    "id_ed25519",
    ".npmrc",
    "pkg/.npmrc",
    ".netrc",
    ".pypirc",
    "secrets/db.txt",
    "config/secrets/api/token",
    "credentials",
    "aws/credentials.json",
  ];
  for (const rel of priv) assert.equal(p.confidentialityOf(rel), "priv", rel);
  const pub = [
    "src/main.ts",
    "README.md",
    "environment.ts",
    ".envrc.md.txt",
    "keys/README.md",
    "keyboard.ts",
    "my_secrets.txt",
    "docs/secret/x.md",
    "pem/readme",
  ];
  for (const rel of pub) assert.equal(p.confidentialityOf(rel), "pub", rel);
});

Deno.test("private: case and Unicode normalisation do not hide a secret", () => {
  const p = new PrivatePaths(["Caf\u00e9/**"]);
  for (
    const rel of [".ENV", "Server.PEM", "ID_RSA", "Secrets/x", "CREDENTIALS.txt", "cafe\u0301/x"]
  ) {
    assert.equal(p.confidentialityOf(rel), "priv", rel);
  }
});

Deno.test("private: configured patterns add to the defaults, never replace them", () => {
  const p = new PrivatePaths(["*.sqlite", "internal/**"]);
  assert.equal(p.confidentialityOf("db/app.sqlite"), "priv");
  assert.equal(p.confidentialityOf("internal/plan.md"), "priv");
  assert.equal(p.confidentialityOf(".env"), "priv");
  assert.equal(p.patterns.length, DEFAULT_PRIVATE_PATTERNS.length + 2);
});
