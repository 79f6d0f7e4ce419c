/**
 * Text-call recovery (src/driver/text_calls.ts) on hostile replies: a model that loops can write
 * one opener tens of thousands of times. Brave Bot's scanner is timed on each shape at full
 * size; the regular expressions it replaced are timed on the same shape at a tenth of the size
 * (at full size the unclosed openers alone took 25 s), for contrast, in a worker stopped after a
 * few seconds.
 */
import { findTextCalls } from "../../src/driver/text_calls.ts";
import { alternate, formatMs } from "./measure.ts";
import type { Row } from "./report.ts";

const N = 60_000;

const SHAPES: { name: string; text(n: number): string }[] = [
  { name: "unclosed <tool_call> openers", text: (n) => "<tool_call>".repeat(n) },
  { name: "</tool_call> closers only", text: (n) => "</tool_call>".repeat(n) },
  { name: "opener, then whitespace", text: (n) => "<tool_call>" + " \n\t".repeat(n) },
  { name: "openers with open braces", text: (n) => '<tool_call>{"name":"a","args":{'.repeat(n) },
  { name: "fences without newlines", text: (n) => "```json ".repeat(n) },
  { name: "unbalanced bare JSON", text: (n) => "{".repeat(n) + "}".repeat(n - 1) },
  { name: "[TOOL_CALLS] markers", text: (n) => "[TOOL_CALLS]".repeat(n) },
  { name: "[TOOL_CALLS]name[ARGS] without JSON", text: (n) => "[TOOL_CALLS]a[ARGS]".repeat(n) },
  {
    name: "[TOOL_CALLS]name[ARGS]{ never closed",
    text: (n) => '[TOOL_CALLS]a[ARGS]{"k":'.repeat(n),
  },
  { name: "<|python_tag|>{ openers", text: (n) => "<|python_tag|>{".repeat(n) },
  {
    name: "<function=…> with unclosed parameters",
    text: (n) => "<tool_call><function=a>" + "<parameter=p>".repeat(n) + "</tool_call>",
  },
  {
    name: "Python dict nesting",
    text: (n) => "<tool_call>" + "{'a': [".repeat(n) + "</tool_call>",
  },
  { name: "unclosed <think> openers", text: (n) => "<think>".repeat(n) },
  {
    name: "<think></think> blocks, then openers",
    text: (n) => "<think></think>".repeat(n) + "<tool_call>".repeat(n),
  },
];

/** The regular expressions' time on `text`, or null when they took longer than `limitMs`. */
function regexMs(text: string, limitMs: number): Promise<number | null> {
  const worker = new Worker(new URL("./text_calls_regex.ts", import.meta.url), { type: "module" });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      worker.terminate();
      resolve(null);
    }, limitMs);
    worker.onmessage = (event: MessageEvent<number>) => {
      clearTimeout(timer);
      worker.terminate();
      resolve(event.data);
    };
    worker.postMessage(text);
  });
}

export async function textCallsBench(quick: boolean, log: (s: string) => void): Promise<Row[]> {
  const n = quick ? N / 10 : N;
  const rows: Row[] = [];
  for (const shape of SHAPES) {
    const text = shape.text(n);
    const small = shape.text(n / 10);
    const [ours] = await alternate([{
      name: "scanner",
      run: () => Promise.resolve(findTextCalls(text)),
    }], quick ? 3 : 5);
    const limitMs = quick ? 1_000 : 3_000;
    const theirs = await regexMs(small, limitMs);
    const regex = theirs === null ? `> ${limitMs / 1000} s` : formatMs(theirs);
    log(`text calls ${shape.name}: ${formatMs(ours.median)} (regex at n/10: ${regex})`);
    rows.push({
      bench: "text calls",
      case: `${shape.name} (n=${n}, ${text.length} chars)`,
      ours: formatMs(ours.median),
      others: `regex at n=${n / 10}: ${regex}`,
      ratio: "",
      target: "< 100 ms",
      met: ours.median < 100,
    });
  }
  return rows;
}
