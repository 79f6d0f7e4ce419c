import assert from "node:assert/strict";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import {
  askQuarantinedRead,
  decodeText,
  labelOfBytes,
  pathNameLabel,
  personNamed,
  previewLines,
} from "./reads.ts";
import { formatLabel, UNTRUSTED_PUBLIC } from "./label.ts";
import { PolicyFilePerson } from "../person/policy_file.ts";
import { sha256 } from "../util/hash.ts";

const enc = new TextEncoder();

Deno.test("reads: a hash-bound trust entry labels only the exact bytes it was bound to", async () => {
  await withPolicy({ trust: {} }, async (fx) => {
    fx.policy.storedTrust.setFile("v.txt", {
      integrity: "T",
      sha256: sha256("same"),
      why: "vouch",
    });
    assert.equal(
      formatLabel(await labelOfBytes(fx.policy, "v.txt", enc.encode("same"))),
      "(T,pub)",
    );
    assert.equal(
      formatLabel(await labelOfBytes(fx.policy, "v.txt", enc.encode("other"))),
      "(U,pub)",
    );
    assert.equal(formatLabel(await labelOfBytes(fx.policy, ".env", enc.encode("x"))), "(U,priv)");
  });
});

Deno.test("reads: a path's name label joins the directories holding each name below the given one; names in rules are the person's", async () => {
  await withPolicy({ trust: { ".": true, a: false, "a/b": true } }, (fx) => {
    const l = (rel: string, from?: string) => formatLabel(pathNameLabel(fx.policy, rel, from));
    assert.equal(l("x/y.txt"), "(T,pub)");
    assert.equal(l("a/z/c.txt"), "(U,pub)", "z is a name inside untrusted a");
    assert.equal(l("a/z/c.txt", "a/z"), "(U,pub)", "c.txt is a name inside untrusted a/z");
    assert.equal(l("a/b/c.txt", "a/b"), "(T,pub)");
    assert.equal(l("a/z/c.txt", "a"), "(U,pub)");
    assert.equal(l("a/b/c.txt"), "(T,pub)", "the person wrote a/b in a rule");
    assert.equal(l("a", "a"), "(T,pub)");
    return Promise.resolve();
  });
});

Deno.test("reads: text is UTF-8 without a NUL in the first 8 KiB", () => {
  assert.equal(decodeText(enc.encode("héllo")), "héllo");
  assert.equal(decodeText(new Uint8Array([0x61, 0x00])), null);
  assert.equal(decodeText(new Uint8Array([0xc3, 0x28])), null);
  const lateNul = new Uint8Array(9000).fill(0x61);
  lateNul[8500] = 0;
  assert.equal(decodeText(lateNul)?.length, 9000, "a NUL after 8 KiB does not make a file binary");
});

Deno.test("reads: the prompt's preview is the first lines, escaped, marked when there is more", () => {
  const text = Array.from({ length: 20 }, (_, i) => `l${i}\u200B`).join("\n");
  const preview = previewLines(enc.encode(text), 10_000);
  assert.equal(preview.length, 11);
  assert.equal(preview[0], "l0\\u{200B}");
  assert.equal(preview[10], "…");
  assert.deepEqual(previewLines(new Uint8Array([1, 0, 2]), 3), ["(binary file, 3 bytes)"]);
  assert.deepEqual(previewLines(enc.encode("a\r\nb"), 4), ["a", "b"]);
});

Deno.test("reads: when nobody can be asked, nothing is read for a preview and a vouch is impossible", async () => {
  const vouching = new PolicyFilePerson(null);
  vouching.quarantinedRead = () => Promise.resolve("vouch");
  await withPolicy({ files: { "u.txt": "x" }, trust: {}, person: vouching }, async (fx) => {
    const answer = await askQuarantinedRead(fx.policy, {
      tool: "read_file",
      rel: "u.txt",
      abs: `${fx.root}/u.txt`,
      size: 1,
      label: UNTRUSTED_PUBLIC,
      viaRef: false,
    });
    assert.equal(answer, "keep");
    assert.deepEqual(fx.workerCalls, []);
    assert.equal(fx.policy.audit.entries[0].decision, "quarantined read: keep");
  });
});

Deno.test("reads: only trusting rules make names the person's words; an untrusting rule does not", async () => {
  await withPolicy({ trust: { "keep/out": false, "in/side": true } }, (fx) => {
    assert.equal(personNamed(fx.policy, "keep"), false);
    assert.equal(personNamed(fx.policy, "keep/out"), false);
    assert.equal(personNamed(fx.policy, "in"), true);
    assert.equal(personNamed(fx.policy, "in/side"), true);
    assert.equal(personNamed(fx.policy, "in/side/x"), false);
    assert.equal(personNamed(fx.policy, "i"), false);
    return Promise.resolve();
  });
});
