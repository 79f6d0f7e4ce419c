/**
 * The text-call recovery before the scanner, for the bench's contrast: one regular expression
 * per format, which retries from every opener. Run as a worker so that a hostile shape that
 * takes minutes can be stopped; it posts back its time in milliseconds.
 */
/// <reference lib="deno.worker" />

function byRegex(text: string): number {
  let found = 0;
  for (
    const pattern of [
      /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g,
      /```(?:json|tool_call|tool)?[ \t]*\n([\s\S]*?)\n?```/g,
    ]
  ) {
    text.replace(pattern, (match) => {
      found++;
      return match;
    });
  }
  return found;
}

self.onmessage = (event: MessageEvent<string>) => {
  const start = performance.now();
  byRegex(event.data);
  self.postMessage(performance.now() - start);
};
