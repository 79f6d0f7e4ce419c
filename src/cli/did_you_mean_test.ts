import assert from "node:assert/strict";
import { askYesNo, editDistance, nearestCommand } from "./did_you_mean.ts";

const NAMES = ["help", "trust", "vouch", "skills", "sessions", "doctor"];

Deno.test("did you mean: edit distance counts a swap of neighbours as one step", () => {
  assert.equal(editDistance("trsut", "trust"), 1);
  assert.equal(editDistance("doctr", "doctor"), 1);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("same", "same"), 0);
});

Deno.test("did you mean: near misses of a subcommand, and what is no slip", () => {
  assert.equal(nearestCommand("doctr", NAMES), "doctor");
  assert.equal(nearestCommand("trsut", NAMES), "trust");
  assert.equal(nearestCommand("Doctor", NAMES), "doctor");
  assert.equal(nearestCommand("sesions", NAMES), "sessions");
  assert.equal(nearestCommand("sesoins", NAMES), "sessions");
  assert.equal(nearestCommand("hlep", NAMES), "help");
  // Far from every name, an exact name, or not a plain word: a prompt, nothing asked.
  for (const word of ["refactor", "docker", "test", "doctor", "trust.", "x", "doctr2"]) {
    assert.equal(nearestCommand(word, NAMES), null, word);
  }
});

Deno.test("did you mean: Enter is yes, n is no, the end of input is neither", async () => {
  const answers = async (lines: (string | null)[]) => {
    const asked: string[] = [];
    const result = await askYesNo("Q? ", {
      write: (t) => asked.push(t),
      read: () => Promise.resolve(lines.shift() ?? null),
    });
    return { result, asked: asked.length };
  };
  assert.deepEqual(await answers([""]), { result: true, asked: 1 });
  assert.deepEqual(await answers(["Y"]), { result: true, asked: 1 });
  assert.deepEqual(await answers([" no "]), { result: false, asked: 1 });
  assert.deepEqual(await answers(["maybe", "n"]), { result: false, asked: 2 });
  assert.deepEqual(await answers([null]), { result: null, asked: 1 });
  assert.deepEqual(await answers(["?", "?", "?"]), { result: false, asked: 3 });
});
