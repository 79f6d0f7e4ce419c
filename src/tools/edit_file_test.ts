import assert from "node:assert/strict";
import { join } from "node:path";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { editFileTool } from "./edit_file.ts";
import { listFilesTool } from "./list_files.ts";
import { ScriptedPerson } from "../../test/support/scripted_person.ts";
import { PolicyFilePerson } from "../person/policy_file.ts";
import type { Approval, WriteApprovalRequest } from "../person/person.ts";
import { UNTRUSTED_PUBLIC } from "../util/label.ts";

const yes = { write: { approved: true } } as const;

Deno.test("edit_file: replaces the one occurrence after the person approves the diff", async () => {
  await withPolicy({
    files: { "a.ts": "const a = 1;\nconst b = 2;\n" },
    trust: { ".": true },
    answers: [yes],
  }, async (fx) => {
    const out = await fx.call(editFileTool, { path: "a.ts", old_text: "b = 2", new_text: "b = 3" });
    assert.equal(out.content, "edited a.ts: replaced 1 occurrence");
    assert.equal(await fx.read("a.ts"), "const a = 1;\nconst b = 3;\n");
    const asked = fx.scripted!.asked[0];
    assert.ok(asked.kind === "write");
    assert.equal(asked.request.tool, "edit_file");
    assert.ok(asked.request.preview.kind === "diff");
    const lines = asked.request.preview.hunks.flatMap((h) => h.lines);
    assert.ok(lines.includes("-const b = 2;") && lines.includes("+const b = 3;"), lines.join("\n"));
  });
});

Deno.test("edit_file: refuses when old_text does not occur, and says so", async () => {
  await withPolicy({ files: { "a.ts": "x\n" }, trust: { ".": true } }, async (fx) => {
    const before = await fx.treeHash();
    const out = await fx.call(editFileTool, { path: "a.ts", old_text: "y", new_text: "z" });
    assert.equal(out.isError, true);
    assert.match(out.content, /old_text does not occur in a\.ts/);
    assert.equal(await fx.treeHash(), before);
    assert.equal(fx.scripted!.asked.length, 0);
  });
});

Deno.test("edit_file: refuses when old_text occurs more than once unless replace_all, and says how often", async () => {
  await withPolicy(
    { files: { "a.ts": "foo foo\nfoo\n" }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      const before = await fx.treeHash();
      const out = await fx.call(editFileTool, { path: "a.ts", old_text: "foo", new_text: "bar" });
      assert.match(
        out.content,
        /old_text occurs 3 times in a\.ts; include more surrounding text to make it unique, or set replace_all/,
      );
      assert.equal(await fx.treeHash(), before);
      const all = await fx.call(editFileTool, {
        path: "a.ts",
        old_text: "foo",
        new_text: "bar",
        replace_all: true,
      });
      assert.equal(all.content, "edited a.ts: replaced 3 occurrences");
      assert.equal(await fx.read("a.ts"), "bar bar\nbar\n");
    },
  );
});

Deno.test("edit_file: old_text is matched byte for byte (whitespace, case and Unicode normalisation count)", async () => {
  await withPolicy(
    { files: { "a.txt": "caf\u00e9\n\tindented\n" }, trust: { ".": true } },
    async (fx) => {
      for (const old of ["cafe\u0301", "CAF\u00c9", "    indented"]) {
        const out = await fx.call(editFileTool, { path: "a.txt", old_text: old, new_text: "x" });
        assert.match(out.content, /does not occur/, old);
      }
    },
  );
});

Deno.test("edit_file: an edit requires a trusted file; an untrusted one is refused before anything is compared", async () => {
  await withPolicy(
    { files: { "vendor/a.js": "CANARY\n" }, trust: { ".": true, vendor: false } },
    async (fx) => {
      const before = await fx.treeHash();
      for (const old of ["CANARY", "absent"]) {
        const out = await fx.call(editFileTool, {
          path: "vendor/a.js",
          old_text: old,
          new_text: "x",
        });
        assert.equal(out.isError, true);
        assert.match(
          out.content,
          /edit_file requires a trusted file and vendor\/a\.js is not trusted; .*spawn_processor and then write_file/,
        );
      }
      assert.equal(await fx.treeHash(), before);
      assert.equal(fx.scripted!.asked.length, 0);
    },
  );
});

Deno.test("edit_file: through a path_ref to an untrusted listing entry, refused without naming it", async () => {
  await withPolicy(
    { files: { "vendor/NAME.js": "a\n" }, trust: { ".": true, vendor: false } },
    async (fx) => {
      await fx.call(listFilesTool, { directory: "vendor" });
      const out = await fx.call(editFileTool, { path_ref: "ref:0", old_text: "a", new_text: "b" });
      assert.match(out.content, /ref:0 is not trusted/);
      assert.doesNotMatch(out.content, /NAME/);
    },
  );
});

Deno.test("edit_file: a refused edit changes nothing", async () => {
  await withPolicy({
    files: { "a.txt": "one\n" },
    trust: { ".": true },
    answers: [{ write: { approved: false, reason: "no" } }],
  }, async (fx) => {
    const before = await fx.treeHash();
    const out = await fx.call(editFileTool, { path: "a.txt", old_text: "one", new_text: "two" });
    assert.match(out.content, /refused: no; nothing was written/);
    assert.equal(await fx.treeHash(), before);
  });
});

Deno.test("edit_file: one-shot without a matching writes glob declines; with one it applies", async () => {
  const file = { writes: ["*.md"] };
  await withPolicy({
    files: { "a.txt": "one\n", "b.md": "one\n" },
    trust: { ".": true },
    person: new PolicyFilePerson(file),
    approvals: file,
  }, async (fx) => {
    const no = await fx.call(editFileTool, { path: "a.txt", old_text: "one", new_text: "two" });
    assert.equal(no.isError, true);
    const yesOut = await fx.call(editFileTool, { path: "b.md", old_text: "one", new_text: "two" });
    assert.equal(yesOut.isError, false);
    assert.equal(await fx.read("a.txt"), "one\n");
    assert.equal(await fx.read("b.md"), "two\n");
  });
});

Deno.test("edit_file: bad input is a clear error (missing file, a directory, empty or identical texts, wrong types, unknown fields)", async () => {
  await withPolicy({ files: { "d/x": "", "a.txt": "a" }, trust: { ".": true } }, async (fx) => {
    const before = await fx.treeHash();
    const cases: [unknown, RegExp][] = [
      [
        { path: "nope.txt", old_text: "a", new_text: "b" },
        /nope\.txt does not exist; edit_file changes an existing file/,
      ],
      [{ path: "d", old_text: "a", new_text: "b" }, /d is a directory/],
      [{ path: "a.txt", old_text: "", new_text: "b" }, /old_text is empty/],
      [{ path: "a.txt", old_text: "a", new_text: "a" }, /new_text is the same as old_text/],
      [{ path: "a.txt", old_text: "a" }, /new_text is required/],
      [
        { path: "a.txt", old_text: "a", new_text: "b", replace_all: "yes" },
        /replace_all must be true or false/,
      ],
      [{ path: "a.txt", old_text: "a", new_text: "b", force: true }, /force/],
      [{ path: ".git/config", old_text: "a", new_text: "b" }, /nothing is written inside \.git/],
    ];
    for (const [args, expected] of cases) {
      const out = await fx.call(editFileTool, args);
      assert.equal(out.isError, true, JSON.stringify(args));
      assert.match(out.content, expected, JSON.stringify(args));
    }
    assert.equal(await fx.treeHash(), before);
  });
});

Deno.test("edit_file: a non-UTF-8 file cannot be edited", async () => {
  await withPolicy(
    { files: { "a.bin": new Uint8Array([0x61, 0xff]) }, trust: { ".": true } },
    async (fx) => {
      const out = await fx.call(editFileTool, { path: "a.bin", old_text: "a", new_text: "b" });
      assert.match(out.content, /not UTF-8 text/);
    },
  );
});

Deno.test("edit_file: a file changed between approval and write is asked about again, with the occurrence re-checked", async () => {
  let root = "";
  let n = 0;
  class Meddler extends ScriptedPerson {
    override async approveWrite(request: WriteApprovalRequest): Promise<Approval> {
      const a = await super.approveWrite(request);
      if (n++ === 0) await Deno.writeTextFile(join(root, "a.txt"), "x\nold\nx\n");
      return a;
    }
  }
  const person = new Meddler([yes, yes]);
  await withPolicy({ files: { "a.txt": "old\n" }, trust: { ".": true }, person }, async (fx) => {
    root = fx.root;
    const out = await fx.call(editFileTool, { path: "a.txt", old_text: "old", new_text: "new" });
    assert.equal(out.isError, false, out.content);
    assert.equal(person.asked.length, 2);
    assert.equal(await fx.read("a.txt"), "x\nnew\nx\n");
  });
});

Deno.test("edit_file: new_text carries the context's label; in a tainted context the edited file becomes untrusted", async () => {
  await withPolicy(
    { files: { "a.txt": "one\n" }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      fx.policy.placeInContext(UNTRUSTED_PUBLIC);
      await fx.call(editFileTool, { path: "a.txt", old_text: "one", new_text: "two" });
      assert.equal(fx.policy.storedTrust.files.get("a.txt")?.integrity, "U");
      const again = await fx.call(editFileTool, {
        path: "a.txt",
        old_text: "two",
        new_text: "three",
      });
      assert.match(again.content, /requires a trusted file/);
    },
  );
});
