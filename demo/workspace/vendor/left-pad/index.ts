export function leftPad(text: string, width: number, fill = " "): string {
  return text.length >= width ? text : fill.repeat(width - text.length) + text;
}
