import { Effect } from "effect"
import { ImapFlow } from "imapflow"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { accepts, freePort } from "./LoopbackPorts.ts"

/**
 * A throwaway Dovecot (Debian's `dovecot-imapd`) for the tests: IMAP only, on
 * a free loopback port, in a temporary folder of its own (configuration,
 * Maildirs, runtime files), with the users of a passwd-file. Started for the
 * scope and removed after it; `.ci/run` installs the package.
 */

export interface Dovecot {
  readonly port: number
  /** Puts a message into `user`'s INBOX (IMAP APPEND); answers its UID. */
  readonly deliver: (user: string, raw: Buffer) => Effect.Effect<number>
}

const idOf = (flag: "-u" | "-g", name: string) => Number(execFileSync("id", [flag, name]).toString().trim())

const configuration = (folder: string, port: number, users: ReadonlyArray<{ readonly user: string; readonly password: string }>) => {
  const asRoot = process.getuid?.() === 0
  // As root, Dovecot's login and internal processes must run as its own unprivileged users, the mail as `dovecot`.
  const internal = asRoot ? "dovecot" : execFileSync("id", ["-un"]).toString().trim()
  const login = asRoot ? "dovenull" : internal
  const mailUid = asRoot ? idOf("-u", "dovecot") : process.getuid!()
  const mailGid = asRoot ? idOf("-g", "dovecot") : process.getgid!()
  writeFileSync(join(folder, "passwd"), users.map(({ user, password }) => `${user}:{PLAIN}${password}\n`).join(""))
  chmodSync(join(folder, "passwd"), 0o644)
  if (asRoot) chownSync(join(folder, "mail"), mailUid, mailGid)
  return `base_dir = ${folder}/run
state_dir = ${folder}/state
instance_name = test-${port}
log_path = ${folder}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:${folder}/mail/%u
first_valid_uid = ${Math.min(mailUid, 100)}
default_internal_user = ${internal}
default_internal_group = ${asRoot ? "dovecot" : execFileSync("id", ["-gn"]).toString().trim()}
default_login_user = ${login}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${folder}/passwd
}
userdb {
  driver = static
  args = uid=${mailUid} gid=${mailGid} home=${folder}/mail/%u
}
`
}

/** Starts Dovecot for the scope with these users. */
export const dovecot = (users: ReadonlyArray<{ readonly user: string; readonly password: string }>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const folder = mkdtempSync(join(tmpdir(), "dovecot-"))
      chmodSync(folder, 0o755)
      for (const sub of ["run", "state", "mail"]) execFileSync("mkdir", ["-p", join(folder, sub)])
      const port = await freePort()
      writeFileSync(join(folder, "dovecot.conf"), configuration(folder, port, users))
      const child: ChildProcess = spawn("dovecot", ["-F", "-c", join(folder, "dovecot.conf")], { stdio: "ignore" })
      let failed: Error | undefined
      child.on("error", (error) => {
        failed = new Error(`dovecot could not start (Debian's dovecot-imapd provides it; .ci/run installs it): ${error.message}`)
      })
      for (let waited = 0; waited < 20_000; waited += 100) {
        if (failed !== undefined) throw failed
        if (child.exitCode !== null) throw new Error(`dovecot exited with code ${child.exitCode}; see ${folder}/dovecot.log`)
        if (await accepts(port)) return { child, folder, port }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error("dovecot did not start within 20 s")
    }),
    ({ child, folder }) =>
      Effect.promise(async () => {
        child.kill()
        await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(undefined)))
        rmSync(folder, { recursive: true, force: true })
      })
  ).pipe(Effect.map(({ port }): Dovecot => ({
    port,
    deliver: (user, raw) =>
      Effect.promise(async () => {
        const password = users.find((entry) => entry.user === user)?.password ?? ""
        const client = new ImapFlow({ host: "127.0.0.1", port, secure: false, auth: { user, pass: password }, logger: false })
        await client.connect()
        try {
          const appended = await client.append("INBOX", raw)
          return appended === false ? 0 : appended.uid ?? 0
        } finally {
          await client.logout()
        }
      })
  })))
