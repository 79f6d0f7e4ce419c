/**
 * `/diff` and `/undo` on the person's screen (issue 27), through a real pseudo-terminal against
 * the scripted model: a write the person approved is listed by /diff with its diff, /undo shows
 * the diff it will apply and asks once, the file gets its old bytes back, and the planner is told
 * with the next message, as the person's words.
 */
import assert from "node:assert/strict";
import { drivePty, sessionPlaces } from "./support/pty.ts";
import { join } from "node:path";
import { startMockModel } from "../scripts/mock-model.ts";

Deno.test("undo pty: /diff lists the session's write, /undo takes it back after one key", async () => {
  const mock = await startMockModel({
    script: {
      replies: [
        {
          tool_calls: [{ name: "write_file", arguments: { path: "a.txt", contents: "NEWLINE\n" } }],
        },
        { text: "written." },
        { text: "noted." },
      ],
    },
  });
  const places = await sessionPlaces("bb-undo-pty-", { "a.txt": "OLDLINE\n" });
  try {
    const steps = [
      { expect: "Trust:", send: "w", answer: true },
      { expect: "›", send: "go\r" },
      { expect: "Write a\\.txt\\?", send: "y", answer: true },
      { expect: "written\\.[\\s\\S]*›", send: "/diff\r" },
      { expect: "-\\s*OLDLINE[\\s\\S]*\\+\\s*NEWLINE[\\s\\S]*›", send: "/undo\r" },
      { expect: "Undo 1 change\\?", send: "y", answer: true },
      { expect: "restored a\\.txt[\\s\\S]*›", send: "thanks\r" },
      { expect: "noted\\.[\\s\\S]*›", send: "/exit\r" },
    ];
    const r = await drivePty(steps, places.args(mock.url)); // NO_COLOR: the default env
    assert.equal(r.ok, true, r.screen.slice(-3000));
    assert.equal(await Deno.readTextFile(join(places.ws, "a.txt")), "OLDLINE\n");
    const last = JSON.stringify(mock.requests.at(-1));
    assert.match(last, /I undid 1 change: your write_file \(a\.txt\)/);
    assert.match(last, /thanks/);
  } finally {
    await mock.stop();
    await places.remove();
  }
});
