/**
 * Programs that obey the repository (design.md §13): real git repositories in a temporary
 * workspace whose `.git/` is untrusted, each with a setting that would run a script creating a
 * marker file outside the workspace, then `git status` / `git diff` / `git log` … through the
 * run tool. The marker must never appear: the stage is refused naming the key, or (for keys the
 * fixed overrides neutralise) it runs without the command.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
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

Deno.test("git guard: core.askPass is overridden", async () => {
  await withAuthServer(async (url) => {
    await withHostileRepo({}, async (h) => {
      await config(h, "core.askPass", h.evil);
    }, async (h) => {
      assertRan(await h.call(["ls-remote", url]));
    });
  });
});

Deno.test("git guard: credential.helper (and a URL's own helper) is overridden", async () => {
  await withAuthServer(async (url) => {
    await withHostileRepo({ runs: 2 }, async (h) => {
      await config(h, "credential.helper", `!${h.evil}`);
    }, async (h) => {
      assertRan(await h.call(["ls-remote", url]));
      await config(h, "--unset", "credential.helper");
      await config(h, `credential.${url}.helper`, `!${h.evil}`);
      assertRan(await h.call(["ls-remote", url]));
    });
  });
});

Deno.test("git guard: core.editor and sequence.editor are overridden", async () => {
  await withHostileRepo({ runs: 2 }, async (h) => {
    await config(h, "core.editor", h.evil);
    await config(h, "sequence.editor", h.evil);
    await git(h.fx.root, "commit", "-qam", "second");
  }, async (h) => {
    await Deno.writeTextFile(join(h.fx.root, "f"), "edited\n");
    // Without a message git asks the editor, which is `false`: the commit fails.
    const commit = await h.call(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-a"]);
    assertRan(commit);
    assert.match(commit.content, /exit status 1\b/);
    await git(h.fx.root, "checkout", "-q", "f");
    assertRan(
      await h.call(["-c", "user.name=t", "-c", "user.email=t@t", "rebase", "-i", "HEAD~1"]),
    );
    await git(h.fx.root, "rebase", "--abort").catch(() => {});
  });
});

/** Adds a commit carrying a (bogus) signature of the given kind, and a branch `signed` to it. */
async function signedCommit(root: string, armor: string): Promise<void> {
  const tree = await git(root, "write-tree");
  const body = `tree ${tree}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n` +
    `gpgsig -----BEGIN ${armor}-----\n abc\n -----END ${armor}-----\n\nsigned\n`;
  const file = join(root, "..", "commit.txt");
  await Deno.writeTextFile(file, body);
  const id = await git(root, "hash-object", "-t", "commit", "-w", file);
  await git(root, "update-ref", "refs/heads/signed", id);
}

Deno.test("git guard: gpg.program is overridden when git log checks a signature", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h.fx.root, "PGP SIGNATURE");
    await config(h, "log.showSignature", "true");
    await config(h, "gpg.program", h.evil);
  }, async (h) => {
    assertRan(await h.call(["log", "-1", "signed"]));
  });
});

Deno.test("git guard: gpg.openpgp.program is overridden", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h.fx.root, "PGP SIGNATURE");
    await config(h, "log.showSignature", "true");
    await config(h, "gpg.openpgp.program", h.evil);
  }, async (h) => {
    assertRan(await h.call(["log", "-1", "signed"]));
  });
});

Deno.test("git guard: gpg.ssh.program is overridden", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h.fx.root, "SSH SIGNATURE");
    await Deno.writeTextFile(join(h.fx.outside, "allowed"), "");
    await config(h, "gpg.ssh.allowedSignersFile", join(h.fx.outside, "allowed"));
    await config(h, "log.showSignature", "true");
    await config(h, "gpg.ssh.program", h.evil);
  }, async (h) => {
    assertRan(await h.call(["log", "-1", "signed"]));
  });
});

Deno.test("git guard: gpg.x509.program is overridden", async () => {
  await withHostileRepo({}, async (h) => {
    await signedCommit(h.fx.root, "SIGNED MESSAGE");
    await config(h, "log.showSignature", "true");
    await config(h, "gpg.x509.program", h.evil);
  }, async (h) => {
    assertRan(await h.call(["log", "-1", "signed"]));
  });
});

Deno.test("git guard: an ext:: URL is not allowed, whatever protocol.allow says", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "protocol.allow", "always");
  }, async (h) => {
    const out = await h.call(["ls-remote", `ext::${h.evil}`]);
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
      await config(h, "remote.o.url", h.fx.outside);
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
    const out = await h.call(["status"]);
    assertRefused(out, "filter.<driver>.clean");
    assert.match(out.content, /\.gitattributes selects a filter driver/);
    // An attribute naming a built-in driver, with nothing configured, is fine.
    await config(h, "--unset", "filter.x.clean");
    await Deno.writeTextFile(join(h.fx.root, ".gitattributes"), "*.py diff=python\n");
    assertRan(await h.call(["status"]));
  });
});

Deno.test("git guard: .git/info/attributes is read too", async () => {
  await withHostileRepo({}, async (h) => {
    await config(h, "diff.x.textconv", h.evil);
    await Deno.mkdir(join(h.fx.root, ".git/info"), { recursive: true });
    await Deno.writeTextFile(join(h.fx.root, ".git/info/attributes"), "f diff=x\n");
  }, async (h) => {
    assertRefused(await h.call(["diff"]), "diff.<driver>.textconv");
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
