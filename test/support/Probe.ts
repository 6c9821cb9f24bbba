import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

/**
 * What ffprobe (a separate binary from the one the service encodes with,
 * shipped by `@ffprobe-installer/ffprobe`) reads in media bytes: the
 * container, the first video stream's size and frame count, the duration.
 */
export interface Probed {
  readonly format: string
  readonly codec: string
  readonly width: number
  readonly height: number
  readonly frames: number
  readonly durationSeconds: number
}

const ffprobe = (createRequire(import.meta.url)("@ffprobe-installer/ffprobe") as { readonly path: string }).path

export const probe = async (bytes: Uint8Array): Promise<Probed> => {
  const folder = await mkdtemp(join(tmpdir(), "probe-"))
  try {
    const file = join(folder, "media")
    await writeFile(file, bytes)
    const { stdout } = await promisify(execFile)(ffprobe, [
      "-v", "error", "-count_frames", "-select_streams", "v:0",
      "-show_entries", "format=format_name,duration:stream=codec_name,width,height,nb_read_frames",
      "-of", "json", file
    ])
    const parsed = JSON.parse(stdout) as {
      readonly format: { readonly format_name: string; readonly duration?: string }
      readonly streams: ReadonlyArray<{ readonly codec_name: string; readonly width: number; readonly height: number; readonly nb_read_frames: string }>
    }
    const stream = parsed.streams[0]!
    return {
      format: parsed.format.format_name,
      codec: stream.codec_name,
      width: stream.width,
      height: stream.height,
      frames: Number(stream.nb_read_frames),
      durationSeconds: Number(parsed.format.duration ?? Number.NaN)
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}
