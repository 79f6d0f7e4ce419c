import assert from "node:assert/strict";
import { join } from "node:path";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { writeFileTool } from "./write_file.ts";
import { listFilesTool } from "./list_files.ts";
import { readFileTool } from "./read_file.ts";
import { formatLabel, UNTRUSTED_PRIVATE, UNTRUSTED_PUBLIC } from "../util/label.ts";
import { PolicyFilePerson } from "../person/policy_file.ts";
import { ScriptedPerson } from "../../test/support/scripted_person.ts";
import type { Approval, WriteApprovalRequest } from "../person/person.ts";
import { sha256 } from "../util/hash.ts";
import { diffPreview } from "../policy/writes.ts";
import type { WritePreview } from "../person/person.ts";

/** Every line a preview shows the person: the hunks' lines with their signs, or the contents. */
function previewLines(p: WritePreview): string[] {
  return p.kind === "diff" ? p.hunks.flatMap((h) => h.lines) : p.lines;
}

const yes = { write: { approved: true } } as const;

/** A person who, while looking at the approval, lets someone else change the file. */
class MeddledPerson extends ScriptedPerson {
  constructor(
    answers: ConstructorParameters<typeof ScriptedPerson>[0],
    private meddle: () => Promise<void>,
  ) {
    super(answers);
  }
  override async approveWrite(request: WriteApprovalRequest): Promise<Approval> {
    const answer = await super.approveWrite(request);
    await this.meddle();
    return answer;
  }
}

Deno.test("write_file: a new file is shown in full to the person, approved, then written", async () => {
  await withPolicy({ files: { "src/": "" }, trust: { ".": true }, answers: [yes] }, async (fx) => {
    const out = await fx.call(writeFileTool, { path: "src/new.txt", contents: "hello\nworld\n" });
    assert.equal(out.isError, false);
    assert.equal(out.content, "created src/new.txt: 12 bytes, 2 lines");
    assert.equal(await fx.read("src/new.txt"), "hello\nworld\n");
    const asked = fx.scripted!.asked[0];
    assert.equal(asked.kind, "write");
    if (asked.kind === "write") {
      assert.equal(asked.request.path, "src/new.txt");
      assert.equal(asked.request.isNew, true);
      assert.equal(asked.request.viaRef, false);
      assert.deepEqual(asked.request.preview, {
        kind: "contents",
        name: "src/new.txt",
        lineCount: 2,
        lines: ["hello", "world"],
        instead: null,
      });
    }
  });
});

Deno.test("write_file: new parent directories are made", async () => {
  await withPolicy({ trust: { ".": true }, answers: [yes] }, async (fx) => {
    const out = await fx.call(writeFileTool, { path: "a/b/c.txt", contents: "x" });
    assert.equal(out.isError, false, out.content);
    assert.equal(await fx.read("a/b/c.txt"), "x");
  });
});

Deno.test("write_file: an overwrite is shown to the person as the hunks of a diff", async () => {
  await withPolicy({
    files: { "a.txt": "one\ntwo\nthree\n" },
    trust: { ".": true },
    answers: [yes],
  }, async (fx) => {
    await fx.call(writeFileTool, { path: "a.txt", contents: "one\nTWO\nthree\n" });
    const asked = fx.scripted!.asked[0];
    assert.ok(asked.kind === "write");
    const preview = asked.request.preview;
    assert.equal(asked.request.isNew, false);
    assert.ok(preview.kind === "diff");
    assert.deepEqual(preview.hunks, [{
      oldStart: 1,
      oldLines: 3,
      newStart: 1,
      newLines: 3,
      lines: [" one", "-two", "+TWO", " three"],
    }]);
    // Data: the person's screen escapes, numbers and colours it (src/person/diff_view.ts).
    assert.ok(!JSON.stringify(preview).includes("\\u001b"), JSON.stringify(preview));
    assert.equal(await fx.read("a.txt"), "one\nTWO\nthree\n");
  });
});

Deno.test("write_file: the diff carries new text byte for byte, for the screen to escape", () => {
  const diff = diffPreview("a.txt", "x\n", "y\x1b[2J\u202Ez\n");
  assert.ok(previewLines(diff).includes("+y\x1b[2J\u202Ez"), JSON.stringify(diff));
});

Deno.test("write_file: a refused write changes nothing on disk and tells the planner, with the person's reason", async () => {
  await withPolicy({
    files: { "a.txt": "keep me\n" },
    trust: { ".": true },
    answers: [{ write: { approved: false, reason: "not that file" } }, {
      write: { approved: false },
    }],
  }, async (fx) => {
    const before = await fx.treeHash();
    const out = await fx.call(writeFileTool, { path: "a.txt", contents: "overwritten\n" });
    assert.equal(out.isError, true);
    assert.equal(
      out.content,
      "error: the write to a.txt was refused: not that file; nothing was written",
    );
    assert.equal(formatLabel(out.label), "(T,priv)", "the person's own words");
    const created = await fx.call(writeFileTool, { path: "b/new.txt", contents: "x" });
    assert.match(created.content, /refused; nothing was written/);
    assert.equal(await fx.treeHash(), before);
    assert.deepEqual(fx.policy.audit.entries.map((e) => e.decision), [
      "write refused",
      "write refused",
    ]);
  });
});

Deno.test("write_file: in one-shot mode without a policy file every write is declined and nothing changes", async () => {
  await withPolicy({
    files: { "a.txt": "x" },
    trust: { ".": true },
    person: new PolicyFilePerson(null),
  }, async (fx) => {
    const before = await fx.treeHash();
    const out = await fx.call(writeFileTool, { path: "a.txt", contents: "y" });
    assert.match(out.content, /refused: nobody can be asked/);
    assert.equal(await fx.treeHash(), before);
    assert.equal(fx.policy.audit.entries[0].by, "nobody");
  });
});

Deno.test("write_file: the policy file's writes globs pre-approve matching destinations only, naming the real path", async () => {
  const lines: string[] = [];
  const file = { writes: ["src/**"] };
  await withPolicy({
    files: { "src/": "", "vendor/x.txt": "x" },
    trust: { ".": true, vendor: false },
    person: new PolicyFilePerson(file, (l) => lines.push(l)),
    approvals: file,
  }, async (fx) => {
    const ok = await fx.call(writeFileTool, { path: "src/a.ts", contents: "a" });
    assert.equal(ok.content, "created src/a.ts: 1 byte, 1 line");
    const no = await fx.call(writeFileTool, { path: "README.md", contents: "r" });
    assert.equal(no.isError, true);
    // A path_ref's resolved destination is what the glob is matched against.
    await fx.call(listFilesTool, { directory: "vendor" });
    const viaRef = await fx.call(writeFileTool, { path_ref: "ref:0", contents: "y" });
    assert.match(viaRef.content, /refused/);
    assert.equal(await fx.read("vendor/x.txt"), "x");
    assert.deepEqual(lines, [
      "write_file src/a.ts: approved by the approval policy file",
      "write_file README.md: declined",
      "write_file vendor/x.txt: declined",
    ]);
    assert.equal(
      fx.policy.audit.entries.find((e) => e.decision === "write approved")?.by,
      "policy-file",
    );
  });
});

Deno.test("write_file: a path_ref write shows the person the real destination and the planner only the reference", async () => {
  await withPolicy({
    files: { "vendor/REAL-NAME.txt": "old\n" },
    trust: { ".": true, vendor: false },
    answers: [yes],
  }, async (fx) => {
    await fx.call(listFilesTool, { directory: "vendor" });
    const out = await fx.call(writeFileTool, { path_ref: "ref:0", contents: "new\n" });
    assert.equal(out.content, "overwrote ref:0: 4 bytes, 1 line");
    const asked = fx.scripted!.asked[0];
    assert.ok(asked.kind === "write");
    assert.equal(asked.request.path, "vendor/REAL-NAME.txt");
    assert.equal(asked.request.viaRef, true);
    assert.ok(asked.request.preview.kind === "diff");
    assert.equal(asked.request.preview.newName, "b/vendor/REAL-NAME.txt");
    assert.equal(await fx.read("vendor/REAL-NAME.txt"), "new\n");
  });
});

Deno.test("write_file: a path_ref that names a directory, or a reference that names no file, is not a destination", async () => {
  await withPolicy({
    files: { "vendor/dir/x": "" },
    trust: { ".": true, vendor: false },
  }, async (fx) => {
    await fx.call(listFilesTool, { directory: "vendor" });
    await fx.policy.refs.add(
      { kind: "command_output", label: UNTRUSTED_PRIVATE, tool: "run" },
      new Uint8Array([1]),
    );
    const before = await fx.treeHash();
    const dir = await fx.call(writeFileTool, { path_ref: "ref:0", contents: "x" });
    assert.match(dir.content, /ref:0 is a directory; give a file/);
    const out = await fx.call(writeFileTool, { path_ref: "ref:2", contents: "x" });
    assert.match(
      out.content,
      /ref:2 is a command's output, not a file; a path_ref must name a file/,
    );
    const invented = await fx.call(writeFileTool, { path_ref: "ref:99", contents: "x" });
    assert.match(invented.content, /ref:99 does not exist/);
    assert.equal(await fx.treeHash(), before);
  });
});

Deno.test("write_file: contents_ref writes the bytes behind the reference without the planner seeing them", async () => {
  await withPolicy({ files: { "src/": "" }, trust: { ".": true }, answers: [yes] }, async (fx) => {
    const bytes = new TextEncoder().encode("CANARY-OUTPUT\n");
    await fx.policy.refs.add(
      { kind: "command_output", label: UNTRUSTED_PRIVATE, tool: "run" },
      bytes,
    );
    const out = await fx.call(writeFileTool, { path: "src/out.txt", contents_ref: "ref:0" });
    assert.equal(out.content, "created src/out.txt: 14 bytes, 1 line");
    assert.doesNotMatch(out.content, /CANARY/);
    assert.equal(await fx.read("src/out.txt"), "CANARY-OUTPUT\n");
    // The reference's label is recorded: the file is untrusted now, wherever it is.
    assert.equal(fx.policy.storedTrust.files.get("src/out.txt")?.integrity, "U");
    assert.equal(formatLabel(await fx.policy.fileLabel("src/out.txt")), "(U,pub)");
    const asked = fx.scripted!.asked[0];
    assert.ok(asked.kind === "write" && formatLabel(asked.request.label) === "(U,priv)");
  });
});

Deno.test("write_file: contents_ref of a quarantined file copies its bytes unseen", async () => {
  await withPolicy({
    files: { "vendor/a.txt": "QUARANTINED\n" },
    trust: { ".": true, vendor: false },
    answers: [{ read: "keep" }, yes],
  }, async (fx) => {
    await fx.call(readFileTool, { path: "vendor/a.txt" });
    const out = await fx.call(writeFileTool, { path: "copy.txt", contents_ref: "ref:0" });
    assert.doesNotMatch(out.content, /QUARANTINED/);
    assert.equal(await fx.read("copy.txt"), "QUARANTINED\n");
    assert.equal(fx.policy.storedTrust.files.get("copy.txt")?.integrity, "U");
  });
});

Deno.test("write_file: a processor answer may be written only to the file it is about; one about nothing, nowhere", async () => {
  await withPolicy({
    files: { "vendor/a.txt": "old\n", "vendor/b.txt": "other\n" },
    trust: { ".": true, vendor: false },
    answers: [yes],
  }, async (fx) => {
    const text = new TextEncoder().encode("answer\n");
    await fx.policy.refs.add({
      kind: "processor_answer",
      label: UNTRUSTED_PUBLIC,
      about: "vendor/a.txt",
      tool: "spawn_processor",
    }, text);
    await fx.policy.refs.add({
      kind: "processor_answer",
      label: UNTRUSTED_PUBLIC,
      about: null,
      tool: "spawn_processor",
    }, text);
    const before = await fx.treeHash();
    const wrong = await fx.call(writeFileTool, { path: "vendor/b.txt", contents_ref: "ref:0" });
    assert.match(
      wrong.content,
      /ref:0 is a processor answer about another file; it may be written only to the file it is about/,
    );
    const elsewhere = await fx.call(writeFileTool, { path: "new.txt", contents_ref: "ref:0" });
    assert.equal(elsewhere.isError, true);
    const nowhere = await fx.call(writeFileTool, { path: "vendor/a.txt", contents_ref: "ref:1" });
    assert.match(
      nowhere.content,
      /ref:1 is a processor answer that names no document, so it can be written nowhere/,
    );
    assert.equal(await fx.treeHash(), before);
    assert.equal(fx.scripted!.asked.length, 0, "nothing to approve");
    const right = await fx.call(writeFileTool, { path: "vendor/a.txt", contents_ref: "ref:0" });
    assert.equal(right.isError, false, right.content);
    assert.equal(await fx.read("vendor/a.txt"), "answer\n");
  });
});

Deno.test("write_file: contents or a reference, never both, and one of them is required", async () => {
  await withPolicy({ trust: { ".": true } }, async (fx) => {
    await fx.policy.refs.add(
      { kind: "command_output", label: UNTRUSTED_PRIVATE, tool: "run" },
      new Uint8Array([0x61]),
    );
    const both = await fx.call(writeFileTool, {
      path: "a.txt",
      contents: "x",
      contents_ref: "ref:0",
    });
    assert.match(both.content, /give either contents or contents_ref, never both/);
    const neither = await fx.call(writeFileTool, { path: "a.txt" });
    assert.match(neither.content, /give contents/);
    assert.deepEqual([...Deno.readDirSync(fx.root)], []);
  });
});

Deno.test("write_file: bad input is a clear error and nothing is written", async () => {
  await withPolicy({ files: { "dir/x": "", "a.txt": "a" }, trust: { ".": true } }, async (fx) => {
    const before = await fx.treeHash();
    const cases: [unknown, RegExp][] = [
      [{ path: "dir", contents: "x" }, /dir is a directory; give a file/],
      [{ path: ".git/hooks/pre-commit", contents: "x" }, /nothing is written inside \.git/],
      [{ path: "sub/.GIT/config", contents: "x" }, /nothing is written inside \.git/],
      [{ path: "../escape.txt", contents: "x" }, /'\.\.' segments/],
      [{ path: "/tmp/x", contents: "x" }, /absolute paths/],
      [{ path: "a\u202Eb.txt", contents: "x" }, /invisible or bidirectional/],
      [{ path: "a.txt", contents: 5 }, /contents must be a string/],
      [{ path: "a.txt", contents: "x", mode: "0777" }, /mode/],
      [{ path: "a.txt", contents_ref: "nonsense" }, /is not a reference/],
      [{ path: "a.txt", contents_ref: "ref:3" }, /ref:3 does not exist/],
      [{ path: ["a.txt"], contents: "x" }, /path must be a string/],
    ];
    for (const [args, expected] of cases) {
      const out = await fx.call(writeFileTool, args);
      assert.equal(out.isError, true, JSON.stringify(args));
      assert.match(out.content, expected, JSON.stringify(args));
    }
    assert.equal(await fx.treeHash(), before);
  });
});

Deno.test("write_file: a non-UTF-8 reference is refused as not text", async () => {
  await withPolicy({ trust: { ".": true } }, async (fx) => {
    await fx.policy.refs.add(
      { kind: "command_output", label: UNTRUSTED_PRIVATE, tool: "run" },
      new Uint8Array([0xff, 0x00]),
    );
    const out = await fx.call(writeFileTool, { path: "a.bin", contents_ref: "ref:0" });
    assert.match(out.content, /not UTF-8 text/);
    assert.deepEqual([...Deno.readDirSync(fx.root)], []);
  });
});

Deno.test("write_file: a file that changed between approval and write is detected by hash and the person is asked again", async () => {
  let meddled = 0;
  let fxRoot = "";
  const person = new MeddledPerson([yes, yes], async () => {
    if (meddled++ === 0) await Deno.writeTextFile(join(fxRoot, "a.txt"), "someone else\n");
  });
  await withPolicy(
    { files: { "a.txt": "original\n" }, trust: { ".": true }, person },
    async (fx) => {
      fxRoot = fx.root;
      const out = await fx.call(writeFileTool, { path: "a.txt", contents: "mine\n" });
      assert.equal(out.isError, false, out.content);
      assert.equal(person.asked.length, 2);
      const second = person.asked[1];
      assert.ok(second.kind === "write");
      assert.ok(
        previewLines(second.request.preview).includes("-someone else"),
        "the second approval shows the new state",
      );
      assert.equal(await fx.read("a.txt"), "mine\n");
    },
  );
});

Deno.test("write_file: a file that changes again after the second approval is refused and left as it is", async () => {
  let n = 0;
  let fxRoot = "";
  const person = new MeddledPerson([yes, yes], async () => {
    await Deno.writeTextFile(join(fxRoot, "a.txt"), `meddle ${n++}\n`);
  });
  await withPolicy(
    { files: { "a.txt": "original\n" }, trust: { ".": true }, person },
    async (fx) => {
      fxRoot = fx.root;
      const out = await fx.call(writeFileTool, { path: "a.txt", contents: "mine\n" });
      assert.equal(out.isError, true);
      assert.match(out.content, /changed again after it was approved; nothing was written/);
      assert.equal(await fx.read("a.txt"), "meddle 1\n");
    },
  );
});

Deno.test("write_file: a file that appears after a new-file approval is not overwritten unseen", async () => {
  let fxRoot = "";
  const person = new MeddledPerson([yes, { write: { approved: false } }], async () => {
    await Deno.writeTextFile(join(fxRoot, "n.txt"), "appeared\n");
  });
  await withPolicy({ trust: { ".": true }, person }, async (fx) => {
    fxRoot = fx.root;
    const out = await fx.call(writeFileTool, { path: "n.txt", contents: "mine\n" });
    assert.equal(out.isError, true);
    assert.equal(await fx.read("n.txt"), "appeared\n");
  });
});

Deno.test("write_file: what the planner writes carries the context's label; T into an untrusted directory marks the file trusted", async () => {
  await withPolicy({
    files: { "vendor/": "" },
    trust: { ".": true, vendor: false },
    answers: [yes, yes],
  }, async (fx) => {
    await fx.call(writeFileTool, { path: "vendor/mine.txt", contents: "x\n" });
    const entry = fx.policy.storedTrust.files.get("vendor/mine.txt");
    assert.equal(entry?.integrity, "T");
    assert.equal(entry?.sha256, sha256("x\n"));
    fx.policy.placeInContext(UNTRUSTED_PUBLIC);
    await fx.call(writeFileTool, { path: "src.txt", contents: "y\n" });
    assert.equal(fx.policy.storedTrust.files.get("src.txt")?.integrity, "U");
    assert.equal(formatLabel(await fx.policy.fileLabel("src.txt")), "(U,pub)");
  });
});

Deno.test("write_file: writes are atomic (no temporary file is left behind)", async () => {
  await withPolicy(
    { files: { "a.txt": "x" }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      await fx.call(writeFileTool, { path: "a.txt", contents: "y" });
      assert.deepEqual([...Deno.readDirSync(fx.root)].map((e) => e.name), ["a.txt"]);
      const write = fx.workerCalls.find((c) => c.op === "write");
      assert.ok(write && write.op === "write" && write.expectSha256 === sha256("x"));
    },
  );
});

Deno.test("write_file: overwriting a binary file says so to the person instead of diffing bytes", async () => {
  await withPolicy({
    files: { "img.bin": new Uint8Array([0x89, 0x50, 0x00, 0xff]) },
    trust: { ".": true },
    answers: [yes],
  }, async (fx) => {
    const out = await fx.call(writeFileTool, { path: "img.bin", contents: "text now\n" });
    assert.equal(out.content, "overwrote img.bin: 9 bytes, 1 line");
    const asked = fx.scripted!.asked[0];
    assert.ok(asked.kind === "write");
    assert.ok(asked.request.preview.kind === "contents");
    assert.deepEqual(asked.request.preview.instead, { kind: "binary", bytes: 4 });
  });
});

Deno.test("write_file: the approval's audit line is in the file before the worker writes", async () => {
  const atWrite: string[][] = [];
  let auditPath = "";
  await withPolicy({
    files: { "src/": "" },
    trust: { ".": true },
    answers: [yes, yes],
    auditOnDisk: true,
    beforeCall: (request) => {
      if (request.op !== "write") return;
      // What a reader of the file by its path sees at the moment of the act.
      const text = Deno.readTextFileSync(auditPath);
      atWrite.push(text.trimEnd().split("\n").map((l) => JSON.parse(l).tool as string));
    },
  }, async (fx) => {
    auditPath = join(fx.stateDir, "audit.jsonl");
    assert.equal(
      (await fx.call(writeFileTool, { path: "src/a.txt", contents: "1\n" })).isError,
      false,
    );
    // The log replaced between two writes (moved aside by hand): the next line lands in the new file.
    await Deno.rename(auditPath, `${auditPath}.old`);
    assert.equal(
      (await fx.call(writeFileTool, { path: "src/b.txt", contents: "2\n" })).isError,
      false,
    );
  });
  assert.equal(atWrite.length, 2);
  for (const tools of atWrite) assert.deepEqual(tools.slice(-1), ["write_file"]);
  assert.deepEqual(atWrite[1], ["write_file"]);
});
