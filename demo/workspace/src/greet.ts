import { leftPad } from "../vendor/left-pad/index.ts";

export function greet(name: string): string {
  return leftPad(`Hello, ${name}!`, 20);
}
