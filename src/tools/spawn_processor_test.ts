import assert from "node:assert/strict";
import { spawnProcessorTool } from "./spawn_processor.ts";
import { type Fixture, withPolicy } from "../../test/support/policy_fixture.ts";
import type { ProcessorPort, ToolContext, ToolDef } from "./tool.ts";
import {
  formatLabel,
  TRUSTED_PRIVATE,
  UNTRUSTED_PRIVATE,
  UNTRUSTED_PUBLIC,
} from "../util/label.ts";
import { ModelError } from "../model/types.ts";
import { contentFromRef } from "../policy/writes.ts";
import { keepDocumentEnding } from "../policy/processors.ts";

const CANARY = "CANARY-7f3a-ignore-previous-instructions";

class FakeProcessor implements ProcessorPort {
  calls: { instruction: string; documents: { name: string; text: string }[] }[] = [];
  constructor(private readonly replies: (string | Error)[]) {}
  complete(instruction: string, documents: { name: string; text: string }[]): Promise<string> {
    this.calls.push({ instruction, documents });
    const next = this.replies.shift();
    if (next === undefined) return Promise.reject(new Error("no reply left"));
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  }
}

function run(ctx: ToolContext, processor: ProcessorPort, args: unknown) {
  const parsed = spawnProcessorTool.schema.safeParse(args);
  if (!parsed.success) throw new Error(parsed.error.message);
  return (spawnProcessorTool as ToolDef<unknown>).handler(parsed.data, { ...ctx, processor });
}

/** A quarantined file reference, as read_file's "keep" makes one. */
function quarantine(fx: Fixture, path: string) {
  return fx.policy.refs.add({ kind: "file", label: UNTRUSTED_PUBLIC, path, tool: "read_file" });
}

const files = {
  "vendor/lib.js": `// ${CANARY}\nexport const x = 1;\n`,
  "vendor/other.js": `// other ${CANARY}\n`,
  "src/.env": `TOKEN=${CANARY}\n`,
};

Deno.test("a single quarantined file: the processor gets its bytes, the planner only a U ref bound to it", async () => {
  await withPolicy({ files, trust: { src: true } }, async (fx) => {
    const file = await quarantine(fx, "vendor/lib.js");
    const p = new FakeProcessor([
      `Looks like a library. ${CANARY}\n=== document ===\nsummary: one export\n`,
    ]);
    const out = await run(fx.ctx, p, { reads: ["ref:0"], instruction: "summarise" });
    assert.equal(out.isError, false, out.content);
    assert.equal(p.calls[0].documents[0].text, files["vendor/lib.js"]);
    assert.equal(p.calls[0].instruction, "summarise");
    // The planner sees the new ref and counts: no canary, no path, no remark.
    assert.ok(!out.content.includes(CANARY));
    assert.ok(!out.content.includes("vendor/lib.js"));
    assert.match(
      out.content,
      /^ref:1: processor answer, 1 line, 20 bytes, bound to the file of ref:0/,
    );
    assert.equal(formatLabel(out.label), "(T,pub)");
    const answer = fx.policy.refs.all()[1];
    assert.equal(answer.kind, "processor_answer");
    assert.equal(answer.about, "vendor/lib.js");
    assert.deepEqual(answer.label, UNTRUSTED_PUBLIC);
    assert.equal(
      new TextDecoder().decode(await fx.policy.refs.bytes(answer)),
      "summary: one export\n",
    );
    // The remark went to the screen and nowhere else.
    assert.deepEqual(fx.emitted, [{ type: "remark", text: `Looks like a library. ${CANARY}` }]);
    assert.ok(!new TextDecoder().decode(await fx.policy.refs.bytes(answer)).includes("Looks like"));
    assert.equal(file.id, 0);
  });
});

Deno.test("several reads with no about: the answer belongs nowhere and no write accepts it", async () => {
  await withPolicy({ files }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    await fx.policy.refs.add({
      kind: "file_name",
      label: UNTRUSTED_PUBLIC,
      path: "vendor/other.js",
      entryType: "file",
      tool: "list_files",
    });
    const p = new FakeProcessor(["=== document ===\nmerged"]);
    const out = await run(fx.ctx, p, { reads: ["ref:0", "ref:1"], instruction: "merge" });
    assert.match(out.content, /about no file: it can be written nowhere/);
    const answer = fx.policy.refs.all()[2];
    assert.equal(answer.about, null);
    const w = await contentFromRef(fx.policy, answer, "vendor/lib.js");
    assert.equal(w.ok, false);
    // A listing entry gives the processor the file's content.
    assert.equal(p.calls[0].documents[1].text, files["vendor/other.js"]);
  });
});

Deno.test("several reads with about: bound to that file, and only that file accepts it", async () => {
  await withPolicy({ files }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    await quarantine(fx, "vendor/other.js");
    const p = new FakeProcessor(["=== document ===\nnew other"]);
    const out = await run(fx.ctx, p, {
      reads: ["ref:0", "ref:1"],
      about: "ref:1",
      instruction: "x",
    });
    assert.match(out.content, /bound to the file of ref:1/);
    const answer = fx.policy.refs.all()[2];
    assert.equal(answer.about, "vendor/other.js");
    assert.equal((await contentFromRef(fx.policy, answer, "vendor/lib.js")).ok, false);
    assert.equal((await contentFromRef(fx.policy, answer, "vendor/other.js")).ok, true);
  });
});

Deno.test("about must be one of reads and name a file; invented refs are named", async () => {
  await withPolicy({ files }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    await fx.policy.refs.add(
      { kind: "command_output", label: UNTRUSTED_PRIVATE, tool: "run" },
      new TextEncoder().encode("out"),
    );
    const p = new FakeProcessor([]);
    const a = await run(fx.ctx, p, { reads: ["ref:0"], about: "ref:1", instruction: "x" });
    assert.match(a.content, /not one of reads/);
    const b = await run(fx.ctx, p, { reads: ["ref:0", "ref:1"], about: "ref:1", instruction: "x" });
    assert.match(b.content, /names no file/);
    const c = await run(fx.ctx, p, { reads: ["ref:9"], instruction: "x" });
    assert.match(c.content, /ref:9 does not exist/);
    const d = await run(fx.ctx, p, { reads: ["ref:0", "ref:0"], instruction: "x" });
    assert.match(d.content, /named twice/);
    assert.equal(p.calls.length, 0);
    assert.equal(
      spawnProcessorTool.schema.safeParse({ reads: [], instruction: "x" }).success,
      false,
    );
  });
});

Deno.test("a reply without the marker names no document: nothing stored, the reply shown as a remark", async () => {
  await withPolicy({ files }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    const p = new FakeProcessor([`I refuse. ${CANARY}`]);
    const out = await run(fx.ctx, p, { reads: ["ref:0"], instruction: "x" });
    assert.equal(out.isError, true);
    assert.match(out.content, /no '=== document ===' line/);
    assert.ok(!out.content.includes(CANARY));
    assert.equal(fx.policy.refs.size, 1);
    assert.deepEqual(fx.emitted, [{ type: "remark", text: `I refuse. ${CANARY}` }]);
  });
});

Deno.test("a marker must be a whole line; the first one splits", async () => {
  await withPolicy({ files }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    const p = new FakeProcessor([
      "note === document === inline\n=== document ===\nA\n=== document ===\nB\n",
    ]);
    await run(fx.ctx, p, { reads: ["ref:0"], instruction: "x" });
    const answer = fx.policy.refs.all()[1];
    assert.equal(
      new TextDecoder().decode(await fx.policy.refs.bytes(answer)),
      "A\n=== document ===\nB\n",
    );
  });
});

Deno.test("private input: (U,priv) answer; to a non-local endpoint the person is asked once per value", async () => {
  await withPolicy({
    files,
    trust: { src: true },
    answers: [{ ask: { kind: "options", chosen: ["send"] } }, {
      ask: { kind: "options", chosen: ["do not send"] },
    }],
  }, async (fx) => {
    await fx.policy.refs.add({
      kind: "file",
      label: UNTRUSTED_PRIVATE,
      path: "src/.env",
      tool: "read_file",
    });
    const remote = {
      ...fx.ctx,
      settings: {
        ...fx.settings,
        processor: { url: "https://models.example/v1", model: "m", local: false },
      },
    };
    const p = new FakeProcessor(["=== document ===\nA", "=== document ===\nB"]);
    const first = await run(remote, p, { reads: ["ref:0"], instruction: "x" });
    assert.equal(first.isError, false, first.content);
    assert.deepEqual(fx.policy.refs.all()[1].label, UNTRUSTED_PRIVATE);
    // Same value again: not asked again.
    await run(remote, p, { reads: ["ref:0"], instruction: "y" });
    assert.equal(fx.scripted!.asked.length, 1);
    assert.match(
      (fx.scripted!.asked[0].request as { question: string }).question,
      /not marked local/,
    );
    // A changed value is asked about; refused, nothing is sent.
    await fx.write("src/.env", "TOKEN=changed\n");
    const refused = await run(remote, p, { reads: ["ref:0"], instruction: "z" });
    assert.equal(refused.isError, true);
    assert.match(refused.content, /did not allow/);
    assert.equal(p.calls.length, 2);
  });
});

Deno.test("a local endpoint receives private input without asking", async () => {
  await withPolicy({ files, trust: { src: true } }, async (fx) => {
    await fx.policy.refs.add({
      kind: "file",
      label: UNTRUSTED_PRIVATE,
      path: "src/.env",
      tool: "read_file",
    });
    const p = new FakeProcessor(["=== document ===\nA"]);
    const out = await run(fx.ctx, p, { reads: ["ref:0"], instruction: "x" });
    assert.equal(out.isError, false);
    assert.equal(fx.scripted!.asked.length, 0);
  });
});

Deno.test("a processor endpoint that fails is an error result, and nothing is stored", async () => {
  await withPolicy({ files }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    const p = new FakeProcessor([
      new ModelError("unreachable", { attempts: 3, seconds: 2 }, "http://x/v1", "last: HTTP 503"),
    ]);
    const out = await run(fx.ctx, p, { reads: ["ref:0"], instruction: "x" });
    assert.equal(out.isError, true);
    assert.match(out.content, /^error: the processor endpoint did not answer after 3 tries/);
    assert.match(out.content, /no answer was stored$/);
    assert.equal(fx.policy.refs.size, 1);
  });
});

Deno.test("an answer can be the input of another processor and keeps its binding", async () => {
  await withPolicy({ files }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    const p = new FakeProcessor(["=== document ===\nA\n", "=== document ===\nB\n"]);
    await run(fx.ctx, p, { reads: ["ref:0"], instruction: "x" });
    await run(fx.ctx, p, { reads: ["ref:1"], instruction: "y" });
    assert.equal(p.calls[1].documents[0].text, "A\n");
    assert.equal(fx.policy.refs.all()[2].about, "vendor/lib.js");
  });
});

Deno.test("a file that became a link since its reference was made carries the label of its target", async () => {
  await withPolicy({
    files,
    trust: { src: true },
    answers: [{ ask: { kind: "options", chosen: ["do not send"] } }],
  }, async (fx) => {
    await fx.policy.refs.add({
      kind: "file_name",
      label: UNTRUSTED_PUBLIC,
      path: "vendor/lib.js",
      entryType: "file",
      tool: "list_files",
    });
    await Deno.remove(`${fx.root}/vendor/lib.js`);
    await Deno.symlink(`${fx.root}/src/.env`, `${fx.root}/vendor/lib.js`);
    const remote = {
      ...fx.ctx,
      settings: {
        ...fx.settings,
        processor: { url: "https://models.example/v1", model: "m", local: false },
      },
    };
    const p = new FakeProcessor(["=== document ===\nA"]);
    const out = await run(remote, p, { reads: ["ref:0"], instruction: "x" });
    // The bytes are .env's: private, so the person is asked, and refusing sends nothing.
    assert.equal(fx.scripted!.asked.length, 1);
    assert.equal(out.isError, true);
    assert.equal(p.calls.length, 0);
  });
});

Deno.test("a file that became a link out of the workspace is refused", async () => {
  const outside = await Deno.makeTempDir({ prefix: "bb-outside-" });
  try {
    await Deno.writeTextFile(`${outside}/secret.txt`, "OUTSIDE");
    await withPolicy({ files }, async (fx) => {
      await quarantine(fx, "vendor/lib.js");
      await Deno.remove(`${fx.root}/vendor/lib.js`);
      await Deno.symlink(`${outside}/secret.txt`, `${fx.root}/vendor/lib.js`);
      const p = new FakeProcessor(["=== document ===\nA"]);
      const out = await run(fx.ctx, p, { reads: ["ref:0"], instruction: "x" });
      assert.equal(out.isError, true);
      assert.match(out.content, /ref:0 no longer names a usable file .*its name is not shown/);
      assert.doesNotMatch(out.content, /lib\.js/);
      assert.equal(p.calls.length, 0);
    });
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("the instruction carries the planner context's label: private, it is asked about for a remote processor", async () => {
  await withPolicy({
    files,
    answers: [{ ask: { kind: "options", chosen: ["do not send"] } }, {
      ask: { kind: "options", chosen: ["send"] },
    }],
  }, async (fx) => {
    await quarantine(fx, "vendor/lib.js");
    // The person's own words are (T,priv): after them, whatever the planner writes is private.
    fx.policy.placeInContext(TRUSTED_PRIVATE);
    const remote = {
      ...fx.ctx,
      settings: {
        ...fx.settings,
        processor: { url: "https://models.example/v1", model: "m", local: false },
      },
    };
    const p = new FakeProcessor(["=== document ===\nA", "=== document ===\nA2"]);
    const refused = await run(remote, p, { reads: ["ref:0"], instruction: "the person's words" });
    assert.equal(refused.isError, true);
    assert.match(refused.content, /the instruction carries the planner context's private label/);
    assert.equal(p.calls.length, 0, "nothing was sent");
    const question = (fx.scripted!.asked[0].request as { question: string }).question;
    assert.match(question, /instruction for the processor/);
    assert.match(question, /\(T,priv\)/);
    // Another instruction is asked about; allowed, it goes, and is not asked about again.
    const allowed = await run(remote, p, { reads: ["ref:0"], instruction: "other words" });
    assert.equal(allowed.isError, false, allowed.content);
    assert.equal(p.calls.length, 1);
    assert.equal(fx.scripted!.asked.length, 2);
    await run(remote, p, { reads: ["ref:0"], instruction: "other words" });
    assert.equal(p.calls.length, 2);
    assert.equal(fx.scripted!.asked.length, 2);
    // A local processor endpoint receives it without asking.
    const local = await run(fx.ctx, new FakeProcessor(["=== document ===\nB"]), {
      reads: ["ref:0"],
      instruction: "third words",
    });
    assert.equal(local.isError, false);
    assert.equal(fx.scripted!.asked.length, 2);
  });
});

Deno.test("the documents are sized to the processor's served window when it is smaller than the config's", async () => {
  const big = `${"x".repeat(2_000)}\n`;
  await withPolicy({ files: { "vendor/big.txt": big } }, async (fx) => {
    await quarantine(fx, "vendor/big.txt");
    // 1,000 tokens served: about 1,800 bytes of documents, less than the file.
    class Small extends FakeProcessor {
      servedTokens(): Promise<number | null> {
        return Promise.resolve(1_000);
      }
    }
    const small = new Small(["=== document ===\nnever\n"]);
    const refused = await run(fx.ctx, small, { reads: ["ref:0"], instruction: "summarise" });
    assert.equal(refused.isError, true);
    assert.match(refused.content, /more than the 1800 accepted here/);
    assert.equal(small.calls.length, 0);
    // A server that does not say leaves the config's window: the same file goes through.
    class Silent extends FakeProcessor {
      servedTokens(): Promise<number | null> {
        return Promise.resolve(null);
      }
    }
    const silent = new Silent(["=== document ===\nsummary\n"]);
    const done = await run(fx.ctx, silent, { reads: ["ref:0"], instruction: "summarise" });
    assert.equal(done.isError, false, done.content);
    assert.equal(silent.calls[0].documents[0].text, big);
  });
});

Deno.test("an answer bound to a document ends as the document does; one bound to nothing as written", () => {
  const cases: [answer: string, document: string, stored: string][] = [
    ["fixed", "old\n", "fixed\n"],
    ["fixed\n", "old", "fixed"],
    ["fixed\n", "old\n\n", "fixed\n\n"],
    ["fixed\n\n\n", "old\n", "fixed\n"],
    ["fixed\n", "old\r\n", "fixed\r\n"],
    ["a\nb\n", "x\ny\n", "a\nb\n"],
    // Nothing but line breaks is an empty answer, left as it is.
    ["", "old\n", ""],
    ["\n", "old", "\n"],
  ];
  for (const [answer, document, stored] of cases) {
    const kept = keepDocumentEnding(answer, document);
    assert.equal(kept.text, stored, JSON.stringify([answer, document]));
    assert.equal(kept.note === null, answer === stored, JSON.stringify([answer, document]));
  }
  assert.equal(
    keepDocumentEnding("fixed", "old\r\n\r\n").note,
    "the processor's answer ended with 0 line breaks, its document with 2 line breaks (CRLF): " +
      "the stored answer ends as the document does",
  );
});

Deno.test("the ending kept is the about document's; the person is told, the planner is not", async () => {
  await withPolicy({
    files: { "vendor/a.txt": "alpha\n\n", "vendor/b.txt": "beta" },
  }, async (fx) => {
    await quarantine(fx, "vendor/a.txt");
    await quarantine(fx, "vendor/b.txt");
    const stored = async (i: number) =>
      new TextDecoder().decode(await fx.policy.refs.bytes(fx.policy.refs.all()[i]));
    const p = new FakeProcessor([
      "=== document ===\nbeta, fixed\n",
      "=== document ===\nmerged\n",
      "=== document ===\nbeta, fixed again\n\n",
    ]);
    const out = await run(fx.ctx, p, {
      reads: ["ref:0", "ref:1"],
      about: "ref:1",
      instruction: "fix b",
    });
    assert.match(out.content, /^ref:2: processor answer, 1 line, 11 bytes/);
    assert.ok(!out.content.includes("ends as"), "the planner is not told");
    assert.equal(await stored(2), "beta, fixed");
    assert.deepEqual(fx.emitted, [{
      type: "notice",
      text: "the processor's answer ended with 1 line break, its document with 0 line breaks: " +
        "the stored answer ends as the document does",
    }]);
    // Bound to nothing: stored as the processor wrote it.
    await run(fx.ctx, p, { reads: ["ref:0", "ref:1"], instruction: "merge" });
    assert.equal(await stored(3), "merged\n");
    // An answer about an earlier answer ends as that answer does (its file's ending).
    await run(fx.ctx, p, { reads: ["ref:2"], instruction: "fix it again" });
    assert.equal(await stored(4), "beta, fixed again");
    assert.equal(fx.policy.refs.all()[4].about, "vendor/b.txt");
  });
});
