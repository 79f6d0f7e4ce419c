/**
 * The text-call recovery before the scanner, for the bench's contrast: one regular expression
 * per format, which retries from every opener. Run as a worker so that a hostile shape that
 * takes minutes can be stopped; it posts back its time in milliseconds. The newer formats
 * (Mistral, Llama's python tag, Qwen3-Coder, leading reasoning) never had regular expressions
 * here; the ones below are what a direct port of the servers' own parsers would use.
 */
/// <reference lib="deno.worker" />

function byRegex(text: string): number {
  let found = 0;
  for (
    const pattern of [
      /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g,
      /```(?:json|tool_call|tool)?[ \t]*\n([\s\S]*?)\n?```/g,
      /\[TOOL_CALLS\]\s*(\[\{[\s\S]*\}\]|[\w.-]+(?:\[ARGS\])?\{[\s\S]*?\})/g,
      /<\|python_tag\|>\s*(\{[\s\S]*\}(?:\s*;\s*\{[\s\S]*\})*)/g,
      /<function=([^>]+)>([\s\S]*?)<\/function>/g,
      /<parameter=([^>]+)>([\s\S]*?)<\/parameter>/g,
      /^\s*<think>[\s\S]*?<\/think>/g,
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
