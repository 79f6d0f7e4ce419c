/**
 * Outputs that nearly fit a `readOutput` shape (docs/contract.md §16.3, issue 23), each of which
 * must be declined: a trailing space, a pre-release, punctuation, a letter past J, nineteen digits
 * (past an integer's 18), a second line, a zero-width space, a bidi control, five version parts.
 * None is a hex number, so a policy without `hex` declines every one.
 */
export const NEAR_MISSES: readonly string[] = [
  "3.1.4 ",
  "3.1.4-rc1",
  "Yes.",
  "K",
  "1234567890123456789",
  "3.1.4\nsecond line\n",
  "3.1\u200B.4",
  "\u202E3.1.4",
  "1.2.3.4.5",
];

/** The shapes every near miss is declined by: all but `hex`, of which nineteen digits are one. */
export const NEAR_MISS_SHAPES = ["version", "yes-no", "letter", "integer"] as const;
