/**
 * Issue 26: a processor's rewrite keeps a file's last bytes. End to end through the program: an
 * untrusted file is read (quarantined), a processor fixes one word, and `write_file` with the
 * answer as `contents_ref` writes it back — byte for byte, whether the file ends in one newline,
 * none or two. The scripted processor copies the document exactly as the request frames it, as a
 * careful model would; the second run's processor ends its reply otherwise (a model or server that
 * drops or adds a final newline), and the stored answer still keeps the file's own ending.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import type { MockReply } from "../scripts/mock-model.ts";

const files: Record<string, string> = {
  "vendor/one.txt": "The qiuck brown fox.\nIt jumps.\n",
  "vendor/none.txt": "The qiuck brown fox.\nIt jumps.",
  "vendor/two.txt": "The qiuck brown fox.\nIt jumps.\n\n",
  "vendor/crlf.txt": "The qiuck brown fox.\r\nIt jumps.\r\n",
};

const planner = (name: string, args: unknown): MockReply => ({
  for: "planner",
  tool_calls: [{ name, arguments: args }],
});

/** Read, rewrite, write back, for each file; `endings[i]` is how the processor ends reply i. */
function script(paths: string[], endings: (string | undefined)[]): MockReply[] {
  return [
    ...paths.flatMap((path, i): MockReply[] => [
      planner("read_file", { path }),
      planner("spawn_processor", {
        reads: ["$FIRST_REF"],
        instruction: "Fix the misspelled word. Change nothing else.",
      }),
      { for: "processor", rewrite: { find: "qiuck", replace: "quick", ending: endings[i] } },
      planner("write_file", { path, contents_ref: "$FIRST_REF" }),
    ]),
    { for: "planner", text: "Fixed." },
  ];
}

const paths = Object.keys(files);
const approvals = { writes: ["vendor/**"] };

async function roundTrips(endings: (string | undefined)[]): Promise<void> {
  await oneShotRun({
    files,
    replies: script(paths, endings),
    approvals,
    args: ["--output-format", "stream-json"],
  }, async (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.mock.remaining(), 0, "the whole script was played");
    const results = run.stdout.trim().split("\n").map((l) => JSON.parse(l))
      .filter((e) => e.type === "tool_result" && e.name === "write_file");
    assert.equal(results.length, paths.length);
    for (const r of results) assert.match(r.content, /^overwrote vendor\//);
    for (const path of paths) {
      const want = new TextEncoder().encode(files[path].replace("qiuck", "quick"));
      const got = await Deno.readFile(join(run.root, path));
      assert.deepEqual(got, want, `${path} was not written back byte for byte`);
    }
    // The person is told each time an answer's ending was made its document's; the planner not.
    const notes = run.stderr.split("\n").filter((l) => l.includes("ends as the document does"));
    assert.equal(notes.length, endings.filter((e) => e !== undefined).length, run.stderr);
    const planner = run.mock.requests.filter((r) => r.kind === "planner").map((r) => r.raw);
    assert.ok(!planner.some((raw) => raw.includes("ends as the document does")));
  });
}

Deno.test("a processor's one-word rewrite round-trips a file's ending: one newline, none, two, CRLF", async () => {
  await roundTrips(paths.map(() => undefined));
});

Deno.test("an answer that ends otherwise than its document keeps the document's own ending", async () => {
  // One newline dropped, one added, one fewer of two, a CRLF file answered with a bare newline.
  await roundTrips(["", "\n", "\n", "\n"]);
});
