/**
 * Escaped text styled for a colour terminal: the one part of escaping that needs to know whether
 * colour is on (picocolors decides at start). Apart from escape.ts so that everything printed
 * through util/output.ts, `bravebot --version` included, loads no npm package (issue 24).
 */
import pc from "picocolors";
import { escapeForScreen, MARKER_OPEN, MARKER_PATTERN } from "./escape.ts";

/**
 * Styles the markers of text already escaped by `escapeForScreen` (inverse video), so
 * they stand out from the text around them; without colour (`NO_COLOR`, not a terminal) the
 * text is returned as it is. Only for the screen: it adds escape sequences.
 */
export function styleMarkers(escaped: string): string {
  if (!pc.isColorSupported || !escaped.includes(MARKER_OPEN)) return escaped;
  return escaped.replace(MARKER_PATTERN, (m) => pc.inverse(m));
}

/** `escapeForScreen`, then {@link styleMarkers}: text straight for the terminal. */
export function escapeStyled(text: string, keepNewlines = false): string {
  return styleMarkers(escapeForScreen(text, keepNewlines));
}
