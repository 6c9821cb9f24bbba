import { Logger } from "effect"

/**
 * A logger that keeps every line (logfmt, with the cause and annotations) in
 * memory, so tests can assert what the service logs — and what it never does.
 */
export const captureLogs = () => {
  const lines: Array<string> = []
  const layer = Logger.layer([Logger.map(Logger.formatLogFmt, (line) => void lines.push(line))])
  return { lines, layer }
}
