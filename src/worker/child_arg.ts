/**
 * The hidden first argument that starts the compiled binary as the kernel wall's child
 * (kernel.ts). In a module of its own so that main.ts can look for it without loading the wall
 * (`bravebot --version` loads nothing else, issue 24).
 */
export const KERNEL_CHILD_ARG = "--bravebot-effect-worker";
