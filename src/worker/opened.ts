/**
 * What a worker read opened (ops/wall.ts), in a module of its own because both the worker's
 * messages (protocol.ts) and the findInFiles op's (search_protocol.ts) carry it.
 */

/** A file's identity on its machine: device and inode (`ino` null where the system has none). */
export interface FileId {
  dev: number;
  ino: number | null;
}

/**
 * What a read opened, as the worker found it: the identity of the handle it read (its `fstat`),
 * and the real path it opened once its own checks passed (ops/wall.ts). The worker reports it
 * with the bytes and decides nothing with it: the policy layer compares it with the entry it
 * labelled (`openedAsChecked`, policy/paths.ts), since a label is only true of what was opened.
 */
export interface OpenedFile extends FileId {
  real: string;
}
