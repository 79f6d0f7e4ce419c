/** The release version, printed by `bravebot --version`. */
export const VERSION = "0.1.0";
