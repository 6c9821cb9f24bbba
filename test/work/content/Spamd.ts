import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { accepts, freePort } from "../../support/LoopbackPorts.ts"

/**
 * A throwaway spamd for tests and benchmarks: Debian's `spamd` on a free
 * loopback port, local tests only, no Bayes, no user configuration. `SPAMASSASSIN_URL`
 * wins when set (a spamd run elsewhere).
 */

export interface Spamd {
  readonly url: string
  readonly stop: () => void
}

const installed = (program: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Is SpamAssassin on this machine (or configured)? */
export const spamAssassinAvailable = (): boolean => process.env.SPAMASSASSIN_URL !== undefined || installed("spamd")

/** Starts spamd (or takes `SPAMASSASSIN_URL`) and waits until it accepts connections (its rules take a few seconds to load). */
export const startSpamd = async (children = 2): Promise<Spamd> => {
  if (process.env.SPAMASSASSIN_URL !== undefined) return { url: process.env.SPAMASSASSIN_URL, stop: () => undefined }
  const port = await freePort()
  const asRoot = process.getuid?.() === 0
  const child: ChildProcess = spawn("spamd", [
    "--local", "--nouser-config", `--listen=127.0.0.1:${port}`, `--max-children=${children}`, "--syslog=stderr",
    "--cf=use_bayes 0", "--cf=bayes_auto_learn 0", ...(asRoot ? ["--username=nobody"] : [])
  ], { stdio: "ignore" })
  let failed: Error | undefined
  child.on("error", (error) => {
    failed = new Error(`spamd could not start (Debian's spamassassin package provides it; .ci/run installs it): ${error.message}`)
  })
  const stop = () => {
    child.kill()
  }
  for (let waited = 0; waited < 60_000; waited += 250) {
    if (failed !== undefined) throw failed
    if (child.exitCode !== null) throw new Error(`spamd exited with code ${child.exitCode}`)
    if (await accepts(port)) return { url: `spamd://127.0.0.1:${port}`, stop }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  stop()
  throw new Error("spamd did not start within 60 s")
}
