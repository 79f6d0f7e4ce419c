import assert from "node:assert/strict";
import { driverPolicy } from "./driver.ts";
import { withheldResult } from "../egress.ts";
import { withPolicy } from "../../../test/support/policy_fixture.ts";
import {
  formatLabel,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PUBLIC,
} from "../../util/label.ts";

const REMOTE = { url: "https://models.example/v1", model: "m", local: false };
const LOCAL = { ...REMOTE, url: "http://127.0.0.1:1/v1", local: true };
const SEND = { ask: { kind: "options" as const, chosen: ["send"] } };
const KEEP = { ask: { kind: "options" as const, chosen: ["do not send"] } };

Deno.test("driver port: a stored result with no label is asked about as (U,priv), and kept back", async () => {
  await withPolicy({ answers: [KEEP] }, async (fx) => {
    const port = driverPolicy(fx.policy);
    const egress = await port.gateResult(REMOTE, {
      tool: "read_file",
      content: "TOKEN=1",
      label: null,
      stored: true,
    });
    assert.equal(fx.scripted!.asked.length, 1);
    const question = (fx.scripted!.asked[0].request as { question: string }).question;
    assert.match(question, /^A stored result of read_file, labelled \(U,priv\)/);
    assert.deepEqual(egress, {
      sent: false,
      withheld: {
        content: withheldResult("read_file"),
        isError: true,
        label: { ...TRUSTED_PUBLIC },
      },
      problem: null,
    });
  });
});

Deno.test("driver port: public results and local endpoints pass the gate without asking", async () => {
  await withPolicy({}, async (fx) => {
    const port = driverPolicy(fx.policy);
    const fresh = { tool: "search", content: "x", stored: false };
    assert.deepEqual(await port.gateResult(REMOTE, { ...fresh, label: UNTRUSTED_PUBLIC }), {
      sent: true,
    });
    assert.deepEqual(await port.gateResult(LOCAL, { ...fresh, label: TRUSTED_PRIVATE }), {
      sent: true,
    });
    assert.equal(fx.scripted!.asked.length, 0);
  });
});

Deno.test("driver port: a fresh private result is asked about as itself, once per value", async () => {
  await withPolicy({ answers: [SEND] }, async (fx) => {
    const port = driverPolicy(fx.policy);
    const result = { tool: "run", content: "TOKEN=2", label: TRUSTED_PRIVATE, stored: false };
    assert.deepEqual(await port.gateResult(REMOTE, result), { sent: true });
    assert.deepEqual(await port.gateResult(REMOTE, result), { sent: true });
    assert.equal(fx.scripted!.asked.length, 1);
    const question = (fx.scripted!.asked[0].request as { question: string }).question;
    assert.match(question, /^The result of run, labelled \(T,priv\)/);
  });
});

Deno.test("driver port: when nobody can be asked the result is kept back, and the person told why", async () => {
  // No answer is scripted: asking throws.
  await withPolicy({ answers: [] }, async (fx) => {
    const port = driverPolicy(fx.policy);
    const egress = await port.gateResult(REMOTE, {
      tool: "run",
      content: "TOKEN=3",
      label: TRUSTED_PRIVATE,
      stored: false,
    });
    assert.equal(egress.sent, false);
    if (egress.sent) return;
    assert.equal(egress.withheld.content, withheldResult("run"));
    assert.equal(formatLabel(egress.withheld.label), "(T,pub)");
    assert.match(egress.problem ?? "", /^could not ask about a private result: /);
  });
});

Deno.test("driver port: the labels the driver places are the policy layer's", async () => {
  await withPolicy({}, (fx) => {
    const port = driverPolicy(fx.policy);
    assert.equal(formatLabel(port.personWordsLabel()), "(T,priv)");
    assert.equal(formatLabel(port.personWordsLabel([UNTRUSTED_PUBLIC])), "(U,priv)");
    assert.equal(formatLabel(port.systemPromptLabel()), "(T,pub)");
    assert.equal(formatLabel(port.summaryLabel()), "(T,pub)");
    port.placeInContext(UNTRUSTED_PUBLIC);
    assert.equal(formatLabel(port.summaryLabel()), "(U,pub)", "the context as it is now");
    return Promise.resolve();
  });
});
