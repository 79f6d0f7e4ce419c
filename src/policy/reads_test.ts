import assert from "node:assert/strict";
import { join } from "node:path";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { readFileRef } from "./reads.ts";
import { label } from "../util/label.ts";

Deno.test("readFileRef: a reference whose file became a link to a private file carries priv", async () => {
  await withPolicy(
    {
      files: { "vendor/a.txt": "plain\n", ".env": "TOKEN=secret\n" },
      trust: { ".": true, vendor: false },
    },
    async (fx) => {
      const ref = await fx.policy.refs.add({
        kind: "file_name",
        entryType: "file",
        path: "vendor/a.txt",
        label: label("U", "pub"),
        tool: "list_files",
      });
      await Deno.remove(join(fx.root, "vendor/a.txt"));
      await Deno.symlink("../.env", join(fx.root, "vendor/a.txt"));
      const read = await readFileRef(fx.policy, ref, 1024);
      assert.ok(read.ok);
      assert.equal(read.value.rel, ".env");
      assert.deepEqual(read.value.label, label("U", "priv"));
      assert.equal(new TextDecoder().decode(read.value.bytes), "TOKEN=secret\n");
    },
  );
});

Deno.test("readFileRef: a reference whose file became a link out of the workspace is refused", async () => {
  const outside = await Deno.makeTempDir({ prefix: "bb-outside-" });
  await Deno.writeTextFile(join(outside, "x"), "outside");
  try {
    await withPolicy(
      { files: { "vendor/a.txt": "plain\n" }, trust: { vendor: false } },
      async (fx) => {
        const ref = await fx.policy.refs.add({
          kind: "file",
          path: "vendor/a.txt",
          label: label("U", "pub"),
          tool: "read_file",
        });
        await Deno.remove(join(fx.root, "vendor/a.txt"));
        await Deno.symlink(join(outside, "x"), join(fx.root, "vendor/a.txt"));
        const read = await readFileRef(fx.policy, ref, 1024);
        assert.equal(read.ok, false);
        if (!read.ok) {
          assert.match(read.error, /no longer names a usable file .*its name is not shown/);
          assert.doesNotMatch(read.error, /a\.txt|vendor/);
        }
      },
    );
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("readFileRef: the size cap is checked before the file is read", async () => {
  await withPolicy(
    { files: { "vendor/big.txt": "x".repeat(100) }, trust: { vendor: false } },
    async (fx) => {
      const ref = await fx.policy.refs.add({
        kind: "file",
        path: "vendor/big.txt",
        label: label("U", "pub"),
        tool: "read_file",
      });
      const before = fx.workerCalls.length;
      const read = await readFileRef(fx.policy, ref, 10);
      assert.equal(read.ok, false);
      assert.equal(fx.workerCalls.slice(before).some((c) => c.op === "read"), false);
    },
  );
});

Deno.test("route: a path_ref whose file became a link outside is refused without naming the file", async () => {
  const outside = await Deno.makeTempDir({ prefix: "bb-outside-" });
  try {
    await withPolicy(
      { files: { "vendor/CANARY-name.txt": "x" }, trust: { vendor: false } },
      async (fx) => {
        const ref = await fx.policy.refs.add({
          kind: "file_name",
          entryType: "file",
          path: "vendor/CANARY-name.txt",
          label: label("U", "pub"),
          tool: "list_files",
        });
        await Deno.remove(join(fx.root, "vendor/CANARY-name.txt"));
        await Deno.symlink(outside, join(fx.root, "vendor/CANARY-name.txt"));
        const routed = await fx.policy.route(undefined, `ref:${ref.id}`);
        assert.equal(routed.ok, false);
        if (!routed.ok) assert.doesNotMatch(routed.error, /CANARY/);
      },
    );
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});
