/**
 * Linux capabilities of what Brave Bot confines (docs/contract.md §13.4): which ones a run stage
 * and the kernel wall's child keep, and how a probe checks, from `/proc/self/status` read inside
 * the box, that a process there holds exactly those.
 *
 * As root, bwrap keeps every capability unless told otherwise (`--unshare-user` alone only moves
 * them into the new user namespace), and with them a stage can remount `/` writable or unmount the
 * tmpfs over Brave Bot's state. So both boxes run with `--cap-drop ALL`, with one exception: root
 * over a workspace another user owns (a container over a host checkout), which root without
 * `CAP_DAC_OVERRIDE` cannot write. That one is kept there, and nothing else: git (commit, checkout,
 * gc, stash, rebase) and npm (install from a tarball) need no more (docs/decisions.md).
 */
import { err, ok, type Result } from "../util/result.ts";

/** The capabilities a box may keep. */
export type Capability = "CAP_DAC_OVERRIDE";

/** The mask `caps` make, as `/proc/self/status` counts it. */
export function capabilityMask(caps: readonly Capability[]): bigint {
  return caps.reduce((mask, c) => mask | (1n << BigInt(NAMES.indexOf(c))), 0n);
}

let known: number | null = null;

/**
 * This process's effective uid: the owner of a folder it has just made (`Deno.uid` would need
 * `--allow-sys`, and Deno refuses `/proc/self` to anything short of `--allow-all`). Asked once.
 */
export function effectiveUid(): number {
  if (known !== null) return known;
  const dir = Deno.makeTempDirSync({ prefix: "bravebot-uid-" });
  try {
    known = Deno.statSync(dir).uid ?? -1;
  } finally {
    Deno.removeSync(dir);
  }
  return known;
}

function ownerOrNull(path: string): number | null {
  try {
    return Deno.statSync(path).uid;
  } catch {
    return null;
  }
}

/**
 * The capabilities a confined process writing `places` keeps: none, except as root where one of
 * them (the folder itself) belongs to another user — then `CAP_DAC_OVERRIDE`, to write files and
 * folders that are not root's. A place that cannot be read keeps nothing. Kept capabilities count
 * only in the machine's own user namespace, so a box that keeps any gets no user namespace.
 */
export function keptCapabilities(
  places: readonly string[],
  uid: number = effectiveUid(),
  ownerOf: (path: string) => number | null = ownerOrNull,
): Capability[] {
  if (uid !== 0) return [];
  const foreign = places.some((p) => {
    const owner = ownerOf(p);
    return owner !== null && owner !== uid;
  });
  return foreign ? ["CAP_DAC_OVERRIDE"] : [];
}

/** The capabilities, and whether no new privileges can be gained, of `/proc/self/status`. */
export interface HeldStatus {
  effective: bigint;
  permitted: bigint;
  noNewPrivs: boolean;
}

/** Reads the lines a probe needs from a `/proc/<pid>/status` text; null when one is missing. */
export function parseStatus(text: string): HeldStatus | null {
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)\\s*$`, "m").exec(text)?.[1];
  const eff = field("CapEff");
  const prm = field("CapPrm");
  const nnp = field("NoNewPrivs");
  if (!eff || !prm || !nnp || !/^[0-9a-f]+$/i.test(eff) || !/^[0-9a-f]+$/i.test(prm)) return null;
  return { effective: BigInt(`0x${eff}`), permitted: BigInt(`0x${prm}`), noNewPrivs: nnp === "1" };
}

/** Every capability's name by its bit (linux/capability.h), for the person's sentence. */
const NAMES = [
  "CAP_CHOWN",
  "CAP_DAC_OVERRIDE",
  "CAP_DAC_READ_SEARCH",
  "CAP_FOWNER",
  "CAP_FSETID",
  "CAP_KILL",
  "CAP_SETGID",
  "CAP_SETUID",
  "CAP_SETPCAP",
  "CAP_LINUX_IMMUTABLE",
  "CAP_NET_BIND_SERVICE",
  "CAP_NET_BROADCAST",
  "CAP_NET_ADMIN",
  "CAP_NET_RAW",
  "CAP_IPC_LOCK",
  "CAP_IPC_OWNER",
  "CAP_SYS_MODULE",
  "CAP_SYS_RAWIO",
  "CAP_SYS_CHROOT",
  "CAP_SYS_PTRACE",
  "CAP_SYS_PACCT",
  "CAP_SYS_ADMIN",
  "CAP_SYS_BOOT",
  "CAP_SYS_NICE",
  "CAP_SYS_RESOURCE",
  "CAP_SYS_TIME",
  "CAP_SYS_TTY_CONFIG",
  "CAP_MKNOD",
  "CAP_LEASE",
  "CAP_AUDIT_WRITE",
  "CAP_AUDIT_CONTROL",
  "CAP_SETFCAP",
  "CAP_MAC_OVERRIDE",
  "CAP_MAC_ADMIN",
  "CAP_SYSLOG",
  "CAP_WAKE_ALARM",
  "CAP_BLOCK_SUSPEND",
  "CAP_AUDIT_READ",
  "CAP_PERFMON",
  "CAP_BPF",
  "CAP_CHECKPOINT_RESTORE",
];

/** A mask in words: up to three names, then how many more. */
function names(mask: bigint): string {
  const all: string[] = [];
  for (let bit = 0n; mask >> bit; bit++) {
    if ((mask >> bit) & 1n) all.push(NAMES[Number(bit)] ?? `capability ${bit}`);
  }
  if (all.length === 0) return "none";
  return all.length <= 3
    ? all.join(", ")
    : `${all.slice(0, 3).join(", ")} and ${all.length - 3} more`;
}

/**
 * The kernel wall's probe child's exit status when {@link checkHeld} fails: it holds a capability
 * or could gain one (kernel_child.ts `check`; kernel.ts reads it).
 */
export const CHECK_HELD = 6;

/**
 * Whether a process inside a box holds exactly the capabilities planned (effective and
 * permitted), and cannot gain more (`NoNewPrivs: 1`); why not, in our words, otherwise.
 */
export function checkHeld(statusText: string, planned: readonly Capability[]): Result<void> {
  const held = parseStatus(statusText);
  if (!held) return err("the probe could not read the capabilities a process holds inside");
  const want = capabilityMask(planned);
  if (held.effective !== want || held.permitted !== want) {
    return err(
      `a process inside holds capabilities ${names(held.effective | held.permitted)} ` +
        `where ${names(want)} were planned`,
    );
  }
  if (!held.noNewPrivs) return err("a process inside could gain privileges (NoNewPrivs is not 1)");
  return ok(undefined);
}
