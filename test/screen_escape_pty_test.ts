/**
 * The exact bytes on the person's screen (issue 17), through a real pseudo-terminal against the
 * scripted model: a diff of code with backslashes is shown byte for byte, and a bidi override,
 * an OSC 52 clipboard write and an OSC 8 link in the planner's answer are shown as markers —
 * styled with colour on, plain under NO_COLOR — and never reach the terminal as sequences.
 */
import assert from "node:assert/strict";
import { drivePty, sessionPlaces } from "./support/pty.ts";
import { startMockModel } from "../scripts/mock-model.ts";

const ESC = "\x1b";
const CODE = "const re = /\\d+\\.\\d+/;";
const ANSWER =
  `**Done** \u202Etxt.exe ${ESC}]52;c;cm0gLXJmIH4=\x07 see ${ESC}]8;;https://evil.example/${ESC}` +
  `\\docs${ESC}]8;;${ESC}\\ end.`;

async function session(env: Record<string, string>): Promise<{ screen: string; raw: string }> {
  const mock = await startMockModel({
    script: {
      replies: [
        {
          tool_calls: [{ name: "write_file", arguments: { path: "re.ts", contents: `${CODE}\n` } }],
        },
        { text: ANSWER, chunk: 5 },
      ],
    },
  });
  const places = await sessionPlaces("bb-screen-");
  try {
    const steps = [
      { expect: "Trust:", send: "\r", answer: true },
      { expect: "›", send: "go\r" },
      { expect: "Write re\\.ts\\?", send: "\r", answer: true },
      { expect: "end\\.[\\s\\S]*›", send: "/exit\r" },
    ];
    const r = await drivePty(steps, places.args(mock.url), { TERM: "xterm-256color", ...env });
    assert.equal(r.ok, true, r.screen.slice(-3000));
    return { screen: r.screen, raw: r.raw };
  } finally {
    await mock.stop();
    await places.remove();
  }
}

function assertShownNeverSent(screen: string, raw: string) {
  // The new file's line, byte for byte, after the diff view's gutter: no doubled backslash.
  assert.ok(screen.includes(`1 + ${CODE}`), screen);
  assert.ok(!screen.includes("\\\\d"), "a backslash was doubled");
  // The answer's sequences as markers, their own characters as they are.
  assert.ok(screen.includes("Done ⟦U+202E⟧txt.exe"), screen);
  assert.ok(screen.includes("⟦U+001B⟧]52;c;cm0gLXJmIH4=⟦U+0007⟧"), screen);
  assert.ok(screen.includes("⟦U+001B⟧]8;;https://evil.example/⟦U+001B⟧\\docs"), screen);
  // What reached the terminal holds none of them.
  for (const sent of [`${ESC}]52`, `${ESC}]8;`, "\u202E"]) {
    assert.ok(!raw.includes(sent), `${JSON.stringify(sent)} reached the terminal`);
  }
}

Deno.test({
  name: "screen (pty): backslashes byte for byte; bidi and OSC sequences shown as styled markers",
  sanitizeResources: false,
  async fn() {
    const { screen, raw } = await session({ NO_COLOR: "" });
    assertShownNeverSent(screen, raw);
    assert.ok(raw.includes(`${ESC}[7m⟦U+202E⟧${ESC}[27m`), "the marker was not styled");
    // The answer's markdown is rendered with colour: its strong text is bold.
    assert.ok(raw.includes(`${ESC}[1mDone${ESC}[22m`), "the answer's markdown was not coloured");
  },
});

Deno.test({
  name: "screen (pty): under NO_COLOR the markers are plain and still unambiguous",
  sanitizeResources: false,
  async fn() {
    const { screen, raw } = await session({ NO_COLOR: "1" });
    assertShownNeverSent(screen, raw);
    // (Inverse video still marks the input box's cursor: it is not a colour.)
    assert.ok(!raw.includes(`${ESC}[7m⟦`), "a marker was styled under NO_COLOR");
    assert.ok(raw.includes("⟦U+202E⟧"));
  },
});
