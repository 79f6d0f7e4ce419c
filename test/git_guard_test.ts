/**
 * Programs that obey the repository (docs/contract.md §13.6): real git repositories in a temporary
 * workspace whose `.git/` is untrusted, each with a setting that would run a script creating a
 * marker file outside the workspace, then `git status` / `git diff` / `git log` … through the
 * run tool. The marker must never appear: the stage is refused naming the key, or (for keys the
 * fixed overrides neutralise) it runs without the command.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import {
  exists,
  type RunFixture,
  type RunFixtureOptions,
  runRequests,
  withRunPolicy,
} from "./support/run_fixture.ts";
import { runTool } from "../src/tools/run.ts";
import type { ToolDef, ToolOutput } from "../src/tools/tool.ts";
import type { RunApprovalRequest } from "../src/person/person.ts";
import { gitOverrideArgs } from "../src/policy/git_guard.ts";
import { inOwnProcess } from "./support/child_test.ts";

const run = runTool as unknown as ToolDef<never>;
const decoder = new TextDecoder();
/** `.git/` untrusted, the rest trusted: the first-use default. */
const UNTRUSTED_GIT = { ".": true, "**/.git": false };

/** git for setting a repository up: no global or system config, identity given on the line. */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: [
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@t",
      "-c",
      "protocol.file.allow=always",
      ...args,
    ],
    cwd,
    env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${decoder.decode(out.stderr)}`);
  return decoder.decode(out.stdout).trim();
}

/** A committed repository at `dir` with one file `f` (changed since, so diff has output). */
async function makeRepo(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await git(dir, "init", "-q", "-b", "main");
  await Deno.writeTextFile(join(dir, "f"), "one\n");
  await git(dir, "add", "f");
  await git(dir, "commit", "-qm", "first");
  await Deno.writeTextFile(join(dir, "f"), "one\ntwo\n");
}

interface Hostile {
  fx: RunFixture;
  /** A script outside the workspace that creates {@link marker} when run. */
  evil: string;
  marker: string;
  call(args: string[], program?: string): Promise<ToolOutput>;
  /** What the person was shown, per run they were asked about. */
  asked(): RunApprovalRequest[];
}

/**
 * A fixture with a repository at the workspace root and a marker script outside; `setup`
 * plants the hostile setting. Every run is approved once, and runs unconfined: only the guard
 * stands between the repository and the script (confined, bwrap's private /tmp would hide the
 * script and the marker, and the check could not fail). `ran` says the script is meant to run.
 */
function withHostileRepo(
  options: RunFixtureOptions & { runs?: number; ran?: boolean },
  setup: (h: Hostile) => Promise<void>,
  check: (h: Hostile) => Promise<void>,
): Promise<void> {
  return withRunPolicy({
    trust: UNTRUSTED_GIT,
    answers: Array.from({ length: options.runs ?? 1 }, () => ({ run: { answer: "once" } })),
    ...options,
    config: { ...options.config, run: { ...options.config?.run, sandbox: "none" } },
  }, async (fx) => {
    const marker = join(fx.outside, "marker");
    const evil = join(fx.outside, "evil.sh");
    await Deno.writeTextFile(evil, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
    await Deno.chmod(evil, 0o755);
    await makeRepo(fx.root);
    const h: Hostile = {
      fx,
      evil,
      marker,
      call: (args, program = "git") => fx.call(run, { pipeline: [{ program, args }] }),
      asked: () => runRequests(fx),
    };
    await setup(h);
    await check(h);
    assert.equal(
      await exists(marker),
      options.ran ?? false,
      options.ran ? "the repository's command did not run" : "the repository's command ran",
    );
  });
}

function assertRefused(out: ToolOutput, key: string) {
  assert.equal(out.isError, true, out.content);
  assert.ok(out.content.includes(`(${key})`), out.content);
  assert.match(out.content, /nothing was run/);
}

function assertRan(out: ToolOutput) {
  assert.equal(out.isError, false, out.content);
}

const config = (h: Hostile, ...pairs: string[]) => git(h.fx.root, "config", ...pairs);

// ---- keys the fixed overrides neutralise: the stage runs, without the command ----

Deno.test("git guard: core.fsmonitor is overridden; a vouched git status runs without it", async () => {
  await withHostileRepo({ answers: [{ run: { answer: "vouch" } }] }, async (h) => {
    await config(h, "core.fsmonitor", h.evil);
  }, async (h) => {
    assertRan(await h.call(["status"]));
    // The vouch matches the planner's own argv: the second run is not asked about.
    assertRan(await h.call(["status"]));
    assert.equal(h.asked().length, 1);
    const stored = JSON.parse(await Deno.readTextFile(h.fx.vouchesFile));
    assert.deepEqual(stored.vouches[0].args, ["status"]);
    // The person saw what runs: the overrides are in the displayed argv.
    const [shown] = h.asked()[0].display;
    assert.ok(shown.includes("core.fsmonitor=false"), shown);
    assert.ok(shown.includes("core.hooksPath=/dev/null"), shown);
  });
});

Deno.test("git guard: hooks in .git/hooks and core.hooksPath do not run", async () => {
  await withHostileRepo({ runs: 2 }, async (h) => {
    const hook = `#!/bin/sh\ntouch '${h.marker}'\n`;
    await Deno.writeTextFile(join(h.fx.root, ".git/hooks/post-index-change"), hook);
    await Deno.chmod(join(h.fx.root, ".git/hooks/post-index-change"), 0o755);
  }, async (h) => {
    assertRan(await h.call(["add", "f"]));
    await Deno.mkdir(join(h.fx.root, "hooks"));
    await Deno.rename(
      join(h.fx.root, ".git/hooks/post-index-change"),
      join(h.fx.root, "hooks/post-index-change"),
    );
    await config(h, "core.hooksPath", "hooks");
    await Deno.writeTextFile(join(h.fx.root, "f"), "three\n");
    assertRan(await h.call(["add", "f"]));
  });
});

Deno.test("git guard: core.pager is overridden (and git log runs)", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "core.pager", h.evil);
  }, async (h) => {
    // A run's output is never a terminal, so git would not page anyway; the screen shows it.
    assertRan(await h.call(["--paginate", "log", "-1"]));
    assert.ok(h.asked()[0].display[0].includes("core.pager=cat"));
  });
});

Deno.test("git guard: core.sshCommand is overridden with plain ssh", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "core.sshCommand", h.evil);
  }, async (h) => {
    // No server listens there: ssh fails, and the repository's command was not run.
    const out = await h.call(["ls-remote", "ssh://127.0.0.1:1/x"]);
    assertRan(out);
    assert.match(out.content, /exit status 128/);
  });
});

/** A local HTTP server that asks for credentials, so git calls askpass and helpers. */
async function withAuthServer(fn: (url: string) => Promise<void>): Promise<void> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("", { status: 401, headers: { "WWW-Authenticate": 'Basic realm="x"' } }),
  );
  try {
    await fn(`http://127.0.0.1:${server.addr.port}/x`);
  } finally {
    await server.shutdown();
  }
}

Deno.test("git guard: credential.helper is overridden; a URL's own helper is refused", async () => {
  await withAuthServer(async (url) => {
    await withHostileRepo({ runs: 1 }, async (h) => {
      await config(h, "credential.helper", `!${h.evil}`);
    }, async (h) => {
      assertRan(await h.call(["ls-remote", url]));
      await config(h, "--unset", "credential.helper");
      await config(h, `credential.${url}.helper`, `!${h.evil}`);
      assertRefused(await h.call(["ls-remote", url]), "credential.<url>.helper");
    });
  });
});

/** Adds a commit carrying a (bogus) signature of the given kind, and a branch `signed` to it. */
async function signedCommit(h: Hostile, armor: string): Promise<void> {
  const root = h.fx.root;
  const tree = await git(root, "write-tree");
  const body = `tree ${tree}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n` +
    `gpgsig -----BEGIN ${armor}-----\n abc\n -----END ${armor}-----\n\nsigned\n`;
  // Outside the workspace, in the fixture's own folder: not the shared temporary folder.
  const file = join(h.fx.outside, "commit.txt");
  await Deno.writeTextFile(file, body);
  const id = await git(root, "hash-object", "-t", "commit", "-w", file);
  await git(root, "update-ref", "refs/heads/signed", id);
}

Deno.test("git guard: gpg.program is overridden when git log checks a signature", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h, "PGP SIGNATURE");
    await config(h, "gpg.program", h.evil);
  }, async (h) => {
    // Asked on the line: a repository's log.showSignature is not on the allow-list.
    assertRan(await h.call(["log", "--show-signature", "-1", "signed"]));
  });
});

Deno.test("git guard: gpg.openpgp.program is overridden", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h, "PGP SIGNATURE");
    await config(h, "gpg.openpgp.program", h.evil);
  }, async (h) => {
    // Asked on the line: a repository's log.showSignature is not on the allow-list.
    assertRan(await h.call(["log", "--show-signature", "-1", "signed"]));
  });
});

Deno.test("git guard: gpg.ssh.program is overridden", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h, "SSH SIGNATURE");
    await Deno.writeTextFile(join(h.fx.outside, "allowed"), "");
    await config(h, "gpg.ssh.program", h.evil);
  }, async (h) => {
    // Without a signers file git runs no program; the planner's own -c names one.
    const signers = `gpg.ssh.allowedSignersFile=${join(h.fx.outside, "allowed")}`;
    assertRan(await h.call(["-c", signers, "log", "--show-signature", "-1", "signed"]));
  });
});

Deno.test("git guard: gpg.x509.program is overridden", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h, "SIGNED MESSAGE");
    await config(h, "gpg.x509.program", h.evil);
  }, async (h) => {
    // Asked on the line: a repository's log.showSignature is not on the allow-list.
    assertRan(await h.call(["log", "--show-signature", "-1", "signed"]));
  });
});

Deno.test("git guard: an ext:: URL is not allowed, whatever protocol.allow says", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    await config(h, "protocol.allow", "always");
  }, async (h) => {
    // The repository may not say it; where it is said (here on the line), the override wins.
    assertRefused(await h.call(["ls-remote", `ext::${h.evil}`]), "protocol.allow");
    await config(h, "--unset", "protocol.allow");
    const out = await h.call(["-c", "protocol.allow=always", "ls-remote", `ext::${h.evil}`]);
    assertRan(out);
    assert.match(out.content, /exit status 128/);
  });
});

// ---- keys no fixed override can neutralise: the stage is refused before anything runs ----

Deno.test("git guard: diff.external refuses git diff (the reproduced attack)", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "diff.external", h.evil);
  }, async (h) => {
    const out = await h.call(["diff"]);
    assertRefused(out, "diff.external");
    assert.ok(!out.content.includes(h.evil), "the value is never quoted");
    assert.equal(h.asked().length, 0, "nobody is asked about a refused stage");
  });
});

Deno.test("git guard: an alias is refused, by its category and not its name", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "alias.st-Secret", `!${h.evil}`);
  }, async (h) => {
    const out = await h.call(["st-Secret"]);
    assertRefused(out, "alias.<name>");
    assert.equal(out.content.split("st-Secret").length, 1, "the alias's name is not shown");
  });
});

for (
  const [key, cmd] of [
    ["filter.<driver>.clean", "clean"],
    ["filter.<driver>.smudge", "smudge"],
    ["filter.<driver>.process", "process"],
  ] as const
) {
  Deno.test(`git guard: a filter driver's ${cmd} command refuses git status`, async () => {
    await withHostileRepo({}, async (h) => {
      await config(h, `filter.x.${cmd}`, h.evil);
    }, async (h) => {
      assertRefused(await h.call(["status"]), key);
    });
  });
}

for (const cmd of ["command", "textconv"]) {
  Deno.test(`git guard: a diff driver's ${cmd} refuses git log -p`, async () => {
    await withHostileRepo({}, async (h) => {
      await config(h, `diff.x.${cmd}`, h.evil);
    }, async (h) => {
      assertRefused(await h.call(["log", "-p"]), `diff.<driver>.${cmd}`);
    });
  });
}

Deno.test("git guard: a merge driver refuses the stage", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "merge.x.driver", h.evil);
  }, async (h) => {
    assertRefused(await h.call(["status"]), "merge.<driver>.driver");
  });
});

Deno.test("git guard: pager.<command> with a command refuses; a boolean is allowed", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "pager.log", h.evil);
  }, async (h) => {
    assertRefused(await h.call(["log", "-1"]), "pager.<command>");
    await config(h, "pager.log", "false");
    await config(h, "pager.status", "less");
    assertRan(await h.call(["log", "-1"]));
  });
});

for (const key of ["uploadpack", "receivepack"]) {
  Deno.test(`git guard: remote.<name>.${key} refuses the stage`, async () => {
    await withHostileRepo({}, async (h) => {
      await config(h, "remote.o.url", "https://127.0.0.1:1/x");
      await config(h, `remote.o.${key}`, h.evil);
    }, async (h) => {
      assertRefused(await h.call(["fetch", "o"]), `remote.<name>.${key}`);
    });
  });
}

Deno.test("git guard: uploadpack.packObjectsHook and core.alternateRefsCommand refuse", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "uploadpack.packObjectsHook", h.evil);
  }, async (h) => {
    assertRefused(await h.call(["status"]), "uploadpack.packObjectsHook");
    await config(h, "--unset", "uploadpack.packObjectsHook");
    await config(h, "core.alternateRefsCommand", h.evil);
    assertRefused(await h.call(["status"]), "core.alternateRefsCommand");
  });
});

Deno.test("git guard: a hostile .gitattributes selecting a configured filter refuses", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    await config(h, "filter.x.clean", h.evil);
    await Deno.writeTextFile(join(h.fx.root, ".gitattributes"), "* filter=x\n");
  }, async (h) => {
    // The key alone refuses, whatever the attributes select.
    assertRefused(await h.call(["status"]), "filter.<driver>.clean");
    // An attribute naming a built-in driver, with nothing configured, is fine.
    await config(h, "--unset", "filter.x.clean");
    await Deno.writeTextFile(join(h.fx.root, ".gitattributes"), "*.py diff=python\n");
    assertRan(await h.call(["status"]));
  });
});

// ---- includes ----

Deno.test("git guard: include.path inside the workspace is read; outside it refuses", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    await Deno.writeTextFile(join(h.fx.root, "vendor.gitconfig"), "[diff]\n\texternal = x\n");
    await config(h, "include.path", "../vendor.gitconfig");
  }, async (h) => {
    assertRefused(await h.call(["diff"]), "diff.external");
    // A harmless included file: the stage runs.
    await Deno.writeTextFile(join(h.fx.root, "vendor.gitconfig"), "[core]\n\tautocrlf = false\n");
    assertRan(await h.call(["diff"]));
    // A file outside the workspace cannot be checked.
    await Deno.writeTextFile(join(h.fx.outside, "x.gitconfig"), `[diff]\nexternal = ${h.evil}\n`);
    await config(h, "--replace-all", "include.path", join(h.fx.outside, "x.gitconfig"));
    const out = await h.call(["diff"]);
    assert.equal(out.isError, true);
    assert.match(out.content, /includes a file outside the workspace/);
    await config(h, "--replace-all", "include.path", "~/x.gitconfig");
    assert.match((await h.call(["diff"])).content, /includes a file outside the workspace/);
  });
});

Deno.test("git guard: includeIf is followed whatever its condition", async () => {
  await withHostileRepo({}, async (h) => {
    await Deno.writeTextFile(join(h.fx.root, "inc"), `[core]\n\tgitProxy = ${h.evil}\n`);
    await config(h, "includeIf.onbranch:main.path", "../inc");
  }, async (h) => {
    assertRefused(await h.call(["status"]), "core.gitProxy");
  });
});

// ---- every git directory the stage reaches ----

Deno.test("git guard: -C into a nested repository checks that repository", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    await makeRepo(join(h.fx.root, "sub"));
    await git(join(h.fx.root, "sub"), "config", "diff.external", h.evil);
  }, async (h) => {
    assertRefused(await h.call(["-C", "sub", "diff"]), "diff.external");
    await Deno.mkdir(join(h.fx.root, "x"));
    assertRefused(await h.call(["-C", "x", "-C", "../sub", "diff"]), "diff.external");
    assertRefused(await h.call(["--git-dir=sub/.git", "--work-tree=sub", "diff"]), "diff.external");
    assertRefused(await h.call(["--git-dir", "sub/.git", "diff"]), "diff.external");
    // The outer repository does not reach an untracked nested one.
    assertRan(await h.call(["diff"]));
    const outside = await h.call(["-C", h.fx.outside, "status"]);
    assert.equal(outside.isError, true);
    assert.match(outside.content, /outside the workspace/);
  });
});

Deno.test("git guard: a submodule's .git/modules/x/config is checked, and -c reaches it", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    const origin = join(h.fx.outside, "origin");
    await makeRepo(origin);
    await git(h.fx.root, "submodule", "add", "-q", origin, "lib");
    await git(h.fx.root, "commit", "-qm", "submodule");
    const module = join(h.fx.root, ".git/modules/lib");
    // Cloned from a path on this machine, which an untrusted remote URL may not name.
    await config(h, "submodule.lib.url", "https://example.com/lib.git");
    await git(module, "config", "remote.origin.url", "https://example.com/lib.git");
    assert.ok(await exists(join(module, "config")));
    // Neutralised key: git status recurses into the submodule with the overrides.
    await git(module, "config", "core.fsmonitor", h.evil);
    await Deno.writeTextFile(join(h.fx.root, "lib/f"), "changed\n");
  }, async (h) => {
    const out = await h.call(["status"]);
    assertRan(out);
    // A key the overrides cannot reach refuses the stage.
    await git(join(h.fx.root, ".git/modules/lib"), "config", "filter.y.process", h.evil);
    assertRefused(await h.call(["status"]), "filter.<driver>.process");
  });
});

Deno.test("git guard: a .git file pointing outside the workspace is refused", async () => {
  await withHostileRepo({}, async (h) => {
    await makeRepo(join(h.fx.outside, "elsewhere"));
    await Deno.mkdir(join(h.fx.root, "wt"));
    await Deno.writeTextFile(
      join(h.fx.root, "wt/.git"),
      `gitdir: ${join(h.fx.outside, "elsewhere/.git")}\n`,
    );
  }, async (h) => {
    const out = await h.call(["-C", "wt", "status"]);
    assert.equal(out.isError, true);
    assert.match(out.content, /outside the workspace/);
  });
});

Deno.test("git guard: a configuration that cannot be parsed refuses (fail closed)", async () => {
  await withHostileRepo({}, async (h) => {
    await Deno.writeTextFile(join(h.fx.root, ".git/config"), '[core "unclosed]\n');
  }, async (h) => {
    const out = await h.call(["status"]);
    assert.equal(out.isError, true);
    assert.match(out.content, /cannot be parsed \(line 1: /);
  });
});

// ---- the person's trust ----

Deno.test("git guard: with .git/ trusted, git runs as the repository configures it", async () => {
  await withHostileRepo({ trust: { ".": true }, ran: true }, async (h) => {
    // The positive control: the same script the other tests plant does run here.
    await config(h, "diff.external", h.evil);
  }, async (h) => {
    const out = await h.call(["diff"]);
    assertRan(out);
    const [shown] = h.asked()[0].display;
    assert.ok(!shown.includes(" -c "), shown);
    assert.ok(!gitOverrideArgs().some((a) => a !== "-c" && shown.includes(a)), shown);
  });
});

// ---- the allow-list (issue 21): any key not known to run nothing is refused ----

/** What the person was told (the screen's notices), in order. */
const notices = (h: Hostile) => h.fx.scripted!.notices;

/** Refused for a key the planner may not be told: our words only, the key to the person. */
function assertRefusedUnnamed(out: ToolOutput, h: Hostile, key: string) {
  assert.equal(out.isError, true, out.content);
  assert.match(out.content, /not on the list of keys known to run nothing/);
  assert.match(out.content, /nothing was run/);
  assert.ok(!out.content.toLowerCase().includes(key.toLowerCase()), out.content);
  assert.ok(notices(h).some((n) => n.includes(key)), JSON.stringify(notices(h)));
}

Deno.test("git guard: tar.<format>.command refuses git -C pkg archive (the reproduced attack)", async () => {
  await withHostileRepo({}, async (h) => {
    const pkg = join(h.fx.root, "pkg");
    await makeRepo(pkg);
    await git(pkg, "config", "tar.Secret9.command", h.evil);
  }, async (h) => {
    const out = await h.call(["-C", "pkg", "archive", "--format=Secret9", "HEAD"]);
    assertRefused(out, "tar.<format>.command");
    assert.ok(!out.content.includes("Secret9"), "the planner is not told the format's name");
    assert.equal(h.asked().length, 0);
    // The person is told the key as written, and the file that sets it.
    const told = notices(h).join("\n");
    assert.ok(told.includes("tar.Secret9.command"), told);
    assert.ok(told.includes("pkg/.git/config"), told);
  });
});

Deno.test("git guard: imap.tunnel refuses git imap-send", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "imap.tunnel", h.evil);
    await config(h, "imap.folder", "x");
    const mbox = await git(h.fx.root, "format-patch", "-1", "--stdout", "HEAD");
    await Deno.writeTextFile(join(h.fx.root, "p.mbox"), mbox + "\n");
  }, async (h) => {
    const out = await h.fx.call(run, {
      pipeline: [{ program: "cat", args: ["p.mbox"] }, { program: "git", args: ["imap-send"] }],
    });
    assertRefused(out, "imap.tunnel");
  });
});

/** Keys that run a program, read a file the repository names, or change where git connects. */
const REFUSED_KEYS: [key: string, value: (h: Hostile) => string, category: string][] = [
  ["sendemail.tocmd", (h) => h.evil, "sendemail.toCmd"],
  ["sendemail.ccCmd", (h) => h.evil, "sendemail.ccCmd"],
  ["sendemail.headerCmd", (h) => h.evil, "sendemail.headerCmd"],
  ["sendemail.sendmailCmd", (h) => h.evil, "sendemail.sendmailCmd"],
  ["sendemail.smtpServer", () => "mail.example.com", "sendemail.smtpServer"],
  ["sendemail.work.toCmd", (h) => h.evil, "sendemail.<identity>.toCmd"],
  ["instaweb.httpd", (h) => h.evil, "instaweb.httpd"],
  ["instaweb.browser", (h) => h.evil, "instaweb.browser"],
  ["svn.authorsProg", (h) => h.evil, "svn.authorsProg"],
  ["remote.o.vcs", () => "evil", "remote.<name>.vcs"],
  ["protocol.allow", () => "always", "protocol.allow"],
  ["protocol.ext.allow", () => "always", "protocol.<name>.allow"],
  ["credential.https://example.com.helper", (h) => `!${h.evil}`, "credential.<url>.helper"],
  ["credential.username", () => "x", "credential.username"],
  ["core.editor", (h) => h.evil, "core.editor"],
  ["sequence.editor", (h) => h.evil, "sequence.editor"],
  ["core.askPass", (h) => h.evil, "core.askPass"],
  ["http.proxy", () => "http://127.0.0.1:1", "http.proxy"],
  ["http.https://example.com.proxy", () => "http://127.0.0.1:1", "http.<url>.proxy"],
  ["remote.o.proxy", () => "http://127.0.0.1:1", "remote.<name>.proxy"],
  ["url.ext::sh.insteadOf", () => "https://", "url.<base>.insteadOf"],
  ["core.excludesFile", (h) => join(h.fx.outside, "x"), "core.excludesFile"],
  ["core.attributesFile", (h) => join(h.fx.outside, "x"), "core.attributesFile"],
  ["merge.tool", () => "vimdiff", "merge.tool"],
];

for (const [key, value, category] of REFUSED_KEYS) {
  Deno.test(`git guard: ${key} in an untrusted configuration refuses the stage`, async () => {
    await withHostileRepo({}, async (h) => {
      await config(h, key, value(h));
    }, async (h) => {
      const out = await h.call(["status"]);
      assertRefused(out, category);
      assert.ok(notices(h).some((n) => n.includes(key.toLowerCase().split(".").pop()!)));
    });
  });
}

Deno.test("git guard: a key Brave Bot knows nothing about is refused; only the person sees it", async () => {
  await withHostileRepo({}, async (h) => {
    await Deno.writeTextFile(
      join(h.fx.root, ".git/config"),
      (await Deno.readTextFile(join(h.fx.root, ".git/config"))) +
        '[x-Leak "Sub Secret"]\n\tkeyLeak = value\n',
    );
  }, async (h) => {
    const out = await h.call(["status"]);
    assertRefusedUnnamed(out, h, "x-leak.Sub Secret.keyleak");
    assert.ok(!out.content.includes("Secret"), out.content);
  });
});

Deno.test("git guard: keys are matched without case, subsections with it", async () => {
  await withHostileRepo({}, async (h) => {
    const file = join(h.fx.root, ".git/config");
    await Deno.writeTextFile(
      file,
      (await Deno.readTextFile(file)) + `[TAR "tgz"]\n\tCommand = ${h.evil}\n`,
    );
  }, async (h) => {
    assertRefused(await h.call(["archive", "--format=tgz", "HEAD"]), "tar.<format>.command");
    // `gpg.ssh.program` is overridden; `gpg.SSH.program` is another key, not on the list.
    const file = join(h.fx.root, ".git/config");
    await Deno.writeTextFile(file, (await Deno.readTextFile(file)).replace(/\[TAR[^]*$/, ""));
    await Deno.writeTextFile(
      file,
      (await Deno.readTextFile(file)) + '[gpg "SSH"]\n\tprogram = x\n',
    );
    assertRefusedUnnamed(await h.call(["status"]), h, "gpg.SSH.program");
  });
});

Deno.test("git guard: what git init, clone and submodule write is allowed", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    // A clone's remote and branch, a sparse checkout, a partial clone, an LFS marker.
    for (
      const [k, v] of [
        ["remote.origin.url", "https://example.com/x.git"],
        ["remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"],
        ["remote.origin.promisor", "true"],
        ["remote.origin.partialclonefilter", "blob:none"],
        ["remote.up.url", "git@example.com:x/y.git"],
        ["remote.up.pushurl", "ssh://git@example.com/x/y.git"],
        ["branch.main.remote", "origin"],
        ["branch.main.merge", "refs/heads/main"],
        ["branch.local.remote", "."],
        ["branch.main.rebase", "true"],
        ["submodule.lib.url", "https://example.com/lib.git"],
        ["submodule.lib.active", "true"],
        ["submodule.lib.update", "rebase"],
        ["core.sparseCheckout", "true"],
        ["core.autocrlf", "input"],
        ["extensions.worktreeConfig", "true"],
        ["user.name", "Someone"],
        ["user.email", "s@example.com"],
        ["maintenance.auto", "false"],
        ["lfs.repositoryformatversion", "0"],
        ["pager.log", "false"],
        ["core.hooksPath", ".husky"],
      ]
    ) await config(h, k, v);
  }, async (h) => {
    assertRan(await h.call(["status"]));
    assert.deepEqual(notices(h), []);
  });
});

// ---- values that make an allowed key run something ----

/** A bare repository inside the workspace whose pre-receive hook creates the marker. */
async function hookedBareRepo(h: Hostile, rel = "dest.git"): Promise<string> {
  const dest = join(h.fx.root, rel);
  await git(h.fx.root, "init", "-q", "--bare", dest);
  await Deno.writeTextFile(join(dest, "hooks/pre-receive"), `#!/bin/sh\ntouch '${h.marker}'\n`);
  await Deno.chmod(join(dest, "hooks/pre-receive"), 0o755);
  return dest;
}

Deno.test("git guard: a remote URL naming a repository on this machine refuses (its hooks run)", async () => {
  await withHostileRepo({}, async (h) => {
    // git clears -c for the other side of a local push: its hooks run with nothing overridden.
    await config(h, "remote.o.url", await hookedBareRepo(h));
  }, async (h) => {
    const out = await h.call(["push", "o", "main"]);
    assertRefused(out, "remote.<name>.url");
    assert.ok(!out.content.includes("dest.git"), out.content);
  });
});

Deno.test("git guard: a remote URL naming a helper program refuses", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    await config(h, "remote.o.url", "evil::x");
  }, async (h) => {
    assertRefused(await h.call(["fetch", "o"]), "remote.<name>.url");
    for (const url of ["file:///tmp/x", "./x", "x", "evil+x://y", "-oProxyCommand=x:y", "h::y"]) {
      await config(h, "remote.o.url", url);
      assertRefused(await h.call(["status"]), "remote.<name>.url");
    }
    await config(h, "remote.o.url", "https://127.0.0.1:1/x");
    assertRan(await h.call(["status"]));
  });
});

Deno.test("git guard: branch.<name>.remote naming a place rather than a remote refuses", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "branch.main.remote", await hookedBareRepo(h));
    await config(h, "branch.main.merge", "refs/heads/main");
  }, async (h) => {
    assertRefused(await h.call(["push"]), "branch.<name>.remote");
  });
});

Deno.test("git guard: submodule.<name>.update other than a built-in mode refuses", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "submodule.lib.update", `!${h.evil}`);
  }, async (h) => {
    assertRefused(await h.call(["status"]), "submodule.<name>.update");
  });
});

// ---- where git lands (issue 21): the work tree, resolved as the kernel resolves it ----

/** A folder outside the workspace holding a file whose name must never reach the planner. */
async function outsideTree(h: Hostile): Promise<string> {
  const dir = join(h.fx.outside, "tree");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "OUTSIDE_NAME"), "x\n");
  return dir;
}

function assertNotShown(out: ToolOutput) {
  assert.equal(out.isError, true, out.content);
  assert.match(out.content, /work tree .*outside the workspace/);
  assert.ok(!out.content.includes("OUTSIDE_NAME"), out.content);
}

Deno.test("git guard: core.worktree outside the workspace refuses the vouched git status", async () => {
  await withHostileRepo({ answers: [{ run: { answer: "vouch" } }] }, async (h) => {
    await config(h, "core.worktree", await outsideTree(h));
  }, async (h) => {
    assertNotShown(await h.call(["status", "--short"]));
    assert.equal(h.asked().length, 0);
  });
});

Deno.test("git guard: core.worktree in config.worktree or an include is read the same way", async () => {
  await withHostileRepo({ runs: 0 }, async (h) => {
    const tree = await outsideTree(h);
    await config(h, "extensions.worktreeConfig", "true");
    await Deno.writeTextFile(
      join(h.fx.root, ".git/config.worktree"),
      `[core]\nworktree = ${tree}\n`,
    );
  }, async (h) => {
    assertNotShown(await h.call(["status", "--short"]));
    await Deno.remove(join(h.fx.root, ".git/config.worktree"));
    await Deno.writeTextFile(
      join(h.fx.root, "inc"),
      `[core]\n\tworktree = ${join(h.fx.outside, "tree")}\n`,
    );
    await config(h, "include.path", "../inc");
    assertNotShown(await h.call(["status", "--short"]));
  });
});

Deno.test("git guard: a work tree through a link out of the workspace refuses (config and --work-tree)", async () => {
  await withHostileRepo({ runs: 0 }, async (h) => {
    await Deno.symlink(await outsideTree(h), join(h.fx.root, "lnk"));
    await config(h, "core.worktree", "../lnk");
  }, async (h) => {
    assertNotShown(await h.call(["status", "--short"]));
    await config(h, "--unset", "core.worktree");
    assertNotShown(await h.call(["--work-tree=lnk", "status", "--short"]));
    // `lnk/..` is where the link leads, then up: outside, though it reads as the workspace root.
    await Deno.mkdir(join(h.fx.outside, "tree/deeper"));
    await Deno.remove(join(h.fx.root, "lnk"));
    await Deno.symlink(join(h.fx.outside, "tree/deeper"), join(h.fx.root, "lnk"));
    assertNotShown(await h.call(["--work-tree=lnk/..", "status", "--short"]));
    await config(h, "core.worktree", "../lnk/..");
    assertNotShown(await h.call(["status", "--short"]));
  });
});

Deno.test("git guard: -C through a link and back up lands where the kernel says", async () => {
  await withHostileRepo({}, async (h) => {
    const elsewhere = join(h.fx.outside, "elsewhere");
    await makeRepo(elsewhere);
    await git(elsewhere, "config", "diff.external", h.evil);
    await Deno.mkdir(join(elsewhere, "deeper"));
    await Deno.symlink(join(elsewhere, "deeper"), join(h.fx.root, "lnk"));
  }, async (h) => {
    // git changes into lnk, then up: into the repository outside, not the workspace root.
    const out = await h.call(["-C", "lnk/..", "diff"]);
    assert.equal(out.isError, true, out.content);
    assert.match(out.content, /outside the workspace/);
  });
});

Deno.test("git guard: an include through a link is followed from where the link leads", async () => {
  await withHostileRepo({}, async (h) => {
    // .git/lnk/a is vendor/d/a; its `../b` is vendor/b to git (the link first, then up).
    await Deno.mkdir(join(h.fx.root, "vendor/d"), { recursive: true });
    await Deno.writeTextFile(join(h.fx.root, "vendor/d/a"), "[include]\n\tpath = ../b\n");
    await Deno.writeTextFile(join(h.fx.root, "vendor/b"), `[diff]\n\texternal = ${h.evil}\n`);
    await Deno.symlink("../vendor/d", join(h.fx.root, ".git/lnk"));
    await config(h, "include.path", "lnk/a");
  }, async (h) => {
    assertRefused(await h.call(["diff"]), "diff.external");
  });
});

Deno.test("git guard: an include git expands (%(prefix)/) refuses", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "include.path", "%(prefix)/etc/gitconfig");
  }, async (h) => {
    const out = await h.call(["status"]);
    assert.equal(out.isError, true, out.content);
    assert.match(out.content, /includes a file outside the workspace/);
  });
});

// It sets GIT_DIR and GIT_WORK_TREE: in a process of its own, where no other test file's git
// runs meanwhile.
inOwnProcess(import.meta.url, {
  name: "git guard: GIT_DIR and GIT_WORK_TREE in Brave Bot's environment do not reach a stage",
  async fn() {
    await withHostileRepo({}, async (h) => {
      await outsideTree(h);
    }, async (h) => {
      Deno.env.set("GIT_WORK_TREE", join(h.fx.outside, "tree"));
      Deno.env.set("GIT_DIR", join(h.fx.root, ".git"));
      try {
        const out = await h.call(["status", "--short"]);
        assertRan(out);
        const shown = h.fx.scripted!.runOutputs.map((e) =>
          decoder.decode(e.kind === "chunk" ? e.bytes : e.tail)
        ).join("");
        assert.ok(!shown.includes("OUTSIDE_NAME"), shown);
        assert.match(shown, /^ M f$/m);
      } finally {
        Deno.env.delete("GIT_WORK_TREE");
        Deno.env.delete("GIT_DIR");
      }
    });
  },
});

// ---- what the first round left open (issue 21): includes, object stores, the other side ----

/** `.git/` trusted (the person's own repository), `vendor/` not. */
const TRUSTED_GIT = { ".": true, "vendor": false };
/** `.git/` and `vendor/` untrusted. */
const UNTRUSTED_VENDOR = { ...UNTRUSTED_GIT, "vendor": false };

async function writeIn(h: Hostile, rel: string, text: string): Promise<void> {
  await Deno.mkdir(join(h.fx.root, rel, ".."), { recursive: true });
  await Deno.writeTextFile(join(h.fx.root, rel), text);
}

Deno.test("git guard: a trusted .git/config including an untrusted file is checked by that file's label", async () => {
  await withHostileRepo({ trust: TRUSTED_GIT, runs: 1 }, async (h) => {
    await writeIn(h, "vendor/evil.cfg", `[core]\n\tfsmonitor = ${h.evil}\n`);
    await config(h, "include.path", "../vendor/evil.cfg");
  }, async (h) => {
    // A key the overrides decide: the stage runs, with them.
    assertRan(await h.call(["status"]));
    assert.ok(h.asked()[0].display[0].includes("core.fsmonitor=false"), h.asked()[0].display[0]);
    // A key no override reaches refuses it; the person is told the included file.
    await writeIn(h, "vendor/evil.cfg", `[diff]\n\texternal = ${h.evil}\n`);
    assertRefused(await h.call(["diff"]), "diff.external");
    assert.ok(notices(h).join("\n").includes("vendor/evil.cfg"), notices(h).join("\n"));
  });
});

Deno.test("git guard: an includeIf in a trusted .git/config, and a trusted file's own include, are read by label", async () => {
  await withHostileRepo({ trust: TRUSTED_GIT, runs: 0 }, async (h) => {
    await writeIn(h, "vendor/evil.cfg", `[diff]\n\texternal = ${h.evil}\n`);
    await config(h, "includeIf.onbranch:main.path", "../vendor/evil.cfg");
  }, async (h) => {
    assertRefused(await h.call(["diff"]), "diff.external");
    // A trusted file in between does not make what it includes trusted.
    await config(h, "--unset", "includeIf.onbranch:main.path");
    await writeIn(h, "mine.cfg", "[include]\n\tpath = vendor/evil.cfg\n");
    await config(h, "include.path", "../mine.cfg");
    assertRefused(await h.call(["diff"]), "diff.external");
  });
});

Deno.test("git guard: a trusted .git/config including a trusted file runs as configured", async () => {
  await withHostileRepo({ trust: TRUSTED_GIT, ran: true }, async (h) => {
    await writeIn(h, "mine.cfg", `[diff]\n\texternal = ${h.evil}\n`);
    await config(h, "include.path", "../mine.cfg");
  }, async (h) => {
    assertRan(await h.call(["diff"]));
    assert.ok(!h.asked()[0].display[0].includes(" -c "), h.asked()[0].display[0]);
  });
});

/** A blob written only to a repository outside the workspace; its id. */
async function outsideBlob(h: Hostile): Promise<{ objects: string; oid: string }> {
  const repo = join(h.fx.outside, "other");
  await makeRepo(repo);
  const file = join(h.fx.outside, "secret.txt");
  await Deno.writeTextFile(file, "OUTSIDE_SECRET\n");
  const oid = await git(repo, "hash-object", "-w", file);
  return { objects: join(repo, ".git/objects"), oid };
}

const ALTERNATES = ".git/objects/info/alternates";

function assertObjectsRefused(out: ToolOutput) {
  assert.equal(out.isError, true, out.content);
  assert.match(out.content, /object store .*outside the workspace/);
  assert.match(out.content, /nothing was run/);
}

Deno.test("git guard: an untrusted objects/info/alternates naming a store outside refuses", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    const { objects } = await outsideBlob(h);
    await writeIn(h, ALTERNATES, `${objects}\n`);
  }, async (h) => {
    const oid = await git(h.fx.outside, "hash-object", join(h.fx.outside, "secret.txt"));
    assertObjectsRefused(await h.call(["cat-file", "-p", oid]));
    // Relative to the object store, after a comment, quoted as git allows: all outside.
    const rel = relative(join(h.fx.root, ".git/objects"), join(h.fx.outside, "other/.git/objects"));
    await writeIn(h, ALTERNATES, `# a comment\n${rel}\n`);
    assertObjectsRefused(await h.call(["cat-file", "-p", oid]));
    await writeIn(h, ALTERNATES, `"${rel.replace(/objects$/, "objec\\164s")}"\n`);
    assertObjectsRefused(await h.call(["cat-file", "-p", oid]));
    // Through a link, then up: where the link leads, then its parent.
    await Deno.symlink(join(h.fx.outside, "other/.git/objects/pack"), join(h.fx.root, ".git/lnk"));
    await writeIn(h, ALTERNATES, "../lnk/..\n");
    assertObjectsRefused(await h.call(["cat-file", "-p", oid]));
    // An alternate inside the workspace is read with the same rule: its own alternates too.
    await makeRepo(join(h.fx.root, "vendor/lib"));
    await writeIn(h, ALTERNATES, "../../vendor/lib/.git/objects\n");
    await writeIn(h, "vendor/lib/" + ALTERNATES, `${join(h.fx.outside, "other/.git/objects")}\n`);
    assertObjectsRefused(await h.call(["cat-file", "-p", oid]));
    await Deno.remove(join(h.fx.root, "vendor/lib/" + ALTERNATES));
    assertRan(await h.call(["cat-file", "-t", "HEAD"]));
  });
});

Deno.test("git guard: an object store that is a link out of the workspace refuses", async () => {
  await withHostileRepo({}, async (h) => {
    const { objects } = await outsideBlob(h);
    await Deno.remove(join(h.fx.root, ".git/objects"), { recursive: true });
    await Deno.symlink(objects, join(h.fx.root, ".git/objects"));
  }, async (h) => {
    assertObjectsRefused(await h.call(["log", "-1"]));
  });
});

Deno.test("git guard: a trusted alternates file may name a store outside", async () => {
  await withHostileRepo({ trust: { ".": true }, runs: 1 }, async (h) => {
    const { objects } = await outsideBlob(h);
    await writeIn(h, ALTERNATES, `${objects}\n`);
  }, async (h) => {
    const oid = await git(h.fx.outside, "hash-object", join(h.fx.outside, "secret.txt"));
    assertRan(await h.call(["cat-file", "-p", oid]));
  });
});

function assertOtherSideRefused(out: ToolOutput, args: string[]) {
  assert.equal(out.isError, true, `${args.join(" ")}: ${out.content}`);
  assert.ok(
    out.content.includes("a repository in the workspace that is not trusted"),
    `${args.join(" ")}: ${out.content}`,
  );
  assert.match(out.content, /nothing was run/);
  assert.ok(!out.content.includes("dest"), out.content);
}

for (const [what, trust] of [["untrusted", UNTRUSTED_VENDOR], ["trusted", TRUSTED_GIT]] as const) {
  Deno.test(`git guard: a local repository the planner names whose .git is untrusted is refused (.git ${what})`, async () => {
    await withHostileRepo({ trust, runs: 0 }, async (h) => {
      await hookedBareRepo(h, "vendor/dest.git");
      await makeRepo(join(h.fx.root, "vendor/src"));
    }, async (h) => {
      const file = `file://${h.fx.root}/vendor/dest.git`;
      for (
        const args of [
          ["push", "./vendor/dest.git", "main"],
          ["push", "vendor/dest.git", "main"],
          ["push", "./vendor/dest", "main"], // git tries `dest.git` too
          ["push", file, "main"],
          ["push", "--repo=./vendor/dest.git", "main"],
          ["-c", "remote.x.url=./vendor/dest.git", "push", "x", "main"],
          ["fetch", "vendor/src/../dest.git"],
          ["pull", "./vendor/dest.git", "main"],
          ["ls-remote", "./vendor/dest.git"],
          ["clone", "./vendor/src", "z"],
          ["clone", "--no-local", "./vendor/src", "z"],
          ["submodule", "add", "./vendor/src", "sm"],
          ["archive", "--remote=./vendor/src", "HEAD"],
          ["upload-pack", "./vendor/dest.git"],
          ["receive-pack", "./vendor/dest.git"],
        ]
      ) {
        assertOtherSideRefused(await h.call(args), args);
      }
      assert.equal(await exists(join(h.fx.root, "z")), false);
    });
  });
}

Deno.test("git guard: a repository outside, or one an alias pushes to, is reached with file transport off", async () => {
  await withHostileRepo({ trust: TRUSTED_GIT, runs: 2 }, async (h) => {
    const dest = join(h.fx.outside, "dest.git");
    await git(h.fx.root, "init", "-q", "--bare", dest);
    await Deno.writeTextFile(join(dest, "hooks/pre-receive"), `#!/bin/sh\ntouch '${h.marker}'\n`);
    await Deno.chmod(join(dest, "hooks/pre-receive"), 0o755);
    await hookedBareRepo(h, "vendor/dest.git");
    await config(h, "alias.pu", "push");
  }, async (h) => {
    // Outside, the guard cannot read it: git is told to reach no repository through a path.
    const out = await h.call(["push", join(h.fx.outside, "dest.git"), "main"]);
    assert.match(out.content, /exit status 128/);
    assert.ok(h.asked()[0].display[0].includes("protocol.file.allow=never"));
    // The person's alias is not known to push; an untrusted repository among its arguments is
    // reached with file transport off too.
    assert.match((await h.call(["pu", "./vendor/dest.git", "main"])).content, /exit status 128/);
  });
});

Deno.test("git guard: a trusted repository in the workspace may be pushed to (its hooks are the person's)", async () => {
  await withHostileRepo({ trust: { ".": true }, ran: true }, async (h) => {
    await hookedBareRepo(h, "repos/dest.git");
  }, async (h) => {
    assertRan(await h.call(["push", "./repos/dest.git", "main"]));
    assert.ok(!h.asked()[0].display[0].includes("protocol.file.allow"));
  });
});

Deno.test("git guard: git's own programs under other names get the guard", async () => {
  await withHostileRepo({ runs: 1 }, async (h) => {
    await config(h, "core.fsmonitor", h.evil);
    const bin = join(h.fx.outside, "bin");
    await Deno.mkdir(bin);
    const real = (await new Deno.Command("sh", { args: ["-c", "command -v git"] }).output())
      .stdout;
    await Deno.symlink(decoder.decode(real).trim(), join(bin, "g"));
  }, async (h) => {
    for (const program of ["git-upload-pack", "git-receive-pack", "git-upload-archive"]) {
      const out = await h.call(["."], program);
      assert.equal(out.isError, true, out.content);
      assert.match(out.content, /cannot be given Brave Bot.s overrides/);
    }
    const shell = await h.call(["-c", "git-upload-pack ."], "git-shell");
    assert.equal(shell.isError, true, shell.content);
    // A link to git by another name is git: it runs with the overrides.
    const path = Deno.env.get("PATH")!;
    Deno.env.set("PATH", `${join(h.fx.outside, "bin")}:${path}`);
    try {
      assertRan(await h.call(["status"], "g"));
      assert.ok(h.asked()[0].display[0].includes("core.fsmonitor=false"));
    } finally {
      Deno.env.set("PATH", path);
    }
  });
});

Deno.test("git guard: git run through a wrapper or a shell is refused", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "core.fsmonitor", h.evil);
  }, async (h) => {
    for (
      const [program, ...args] of [
        ["env", "git", "status"],
        ["env", "FOO=1", "/usr/bin/git", "status"],
        ["nice", "-n", "5", "git", "status"],
        ["timeout", "5", "git", "status"],
        ["nohup", "git", "status"],
        ["xargs", "git", "status"],
        ["sh", "-c", "git status"],
        ["bash", "-c", "cd . && git status"],
        ["find", ".", "-maxdepth", "0", "-exec", "git", "status", ";"],
      ]
    ) {
      const out = await h.call(args, program);
      assert.equal(out.isError, true, `${program} ${args.join(" ")}: ${out.content}`);
      assert.match(out.content, /runs git through/);
    }
  });
});

Deno.test("git guard: a hook a run wrote into a trusted .git is untrusted, and does not run", async () => {
  await withHostileRepo({ trust: { ".": true }, runs: 1 }, async (h) => {
    const hook = join(h.fx.root, ".git/hooks/post-index-change");
    await Deno.writeTextFile(hook, `#!/bin/sh\ntouch '${h.marker}'\n`);
    await Deno.chmod(hook, 0o755);
    // What a run's record leaves for a file it wrote in .git/: never trusted.
    await h.fx.policy.changeTrust((map) =>
      map.setFile(".git/hooks/post-index-change", { integrity: "U", why: "run" })
    );
  }, async (h) => {
    assertRan(await h.call(["add", "f"]));
    assert.ok(h.asked()[0].display[0].includes("core.hooksPath=/dev/null"));
  });
});
