import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Blob } from "../../../src/media/files/Blob.ts"
import { backends } from "../../support/TestServer.ts"

const folder = Layer.unwrap(Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "blobs-"))),
    (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
  ),
  // A folder that does not exist yet: the first put makes it.
  (path) => Blob.folder(join(path, "blobs"))
))

const implementations = [
  ...backends.map((backend) => ({ name: `the database on ${backend.name}`, layer: Blob.database.pipe(Layer.provide(backend.storage)) })),
  { name: "a folder", layer: folder }
]

describe.each(implementations)("Blob contract: $name", ({ layer }) => {
  it.layer(layer)((it) => {
    it.effect("put, get and delete by id keep bytes, content type and size exactly", () =>
      Effect.gen(function*() {
        const blob = yield* Blob
        const bytes = new Uint8Array(randomBytes(1024 * 1024 + 3))
        yield* blob.put({ id: "fil_big", contentType: "image/png", bytes })
        const stored = Option.getOrThrow(yield* blob.get("fil_big"))
        expect(stored).toMatchObject({ id: "fil_big", contentType: "image/png", size: bytes.length })
        expect(Buffer.from(stored.bytes).equals(Buffer.from(bytes))).toBe(true)
        expect(yield* blob.delete("fil_big")).toBe(true)
        expect(Option.isNone(yield* blob.get("fil_big"))).toBe(true)
        expect(yield* blob.delete("fil_big")).toBe(false)
      }))

    it.effect("a put under an existing id replaces it; unknown and unsafe ids are absent", () =>
      Effect.gen(function*() {
        const blob = yield* Blob
        yield* blob.put({ id: "fil_same", contentType: "image/gif", bytes: new Uint8Array([1, 2, 3]) })
        yield* blob.put({ id: "fil_same", contentType: "image/webp", bytes: new Uint8Array([0, 255]) })
        const stored = Option.getOrThrow(yield* blob.get("fil_same"))
        expect({ ...stored, bytes: [...stored.bytes] }).toEqual({
          id: "fil_same",
          contentType: "image/webp",
          size: 2,
          bytes: [0, 255]
        })
        yield* blob.put({ id: "fil_empty", contentType: "text/plain", bytes: new Uint8Array() })
        expect(Option.getOrThrow(yield* blob.get("fil_empty")).size).toBe(0)
        for (const id of ["fil_unknown", "../etc/passwd", ""]) {
          expect(Option.isNone(yield* blob.get(id))).toBe(true)
          expect(yield* blob.delete(id)).toBe(false)
        }
      }))
  })
})
