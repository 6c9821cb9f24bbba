// The settings benchmarks read from the environment, parsed one way.

/** A numeric setting, or its default; anything but a non-negative number stops the run. */
export const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`)
  return value
}

/** A comma-separated list, or undefined when unset; with `choices`, a name outside them stops the run. */
export const listFromEnv = <const Choice extends string = string>(name: string, choices?: ReadonlyArray<Choice>) => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return undefined
  const chosen = raw.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  const unknown = choices === undefined ? [] : chosen.filter((entry) => !(choices as ReadonlyArray<string>).includes(entry))
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(", ")}; choose among ${choices!.join(", ")}`)
  return chosen as Array<Choice>
}

/** True when the setting is `1`. */
export const flagFromEnv = (name: string) => process.env[name] === "1"
