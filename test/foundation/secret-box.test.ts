import { describe, expect, it } from "@effect/vitest"
import { SealedValueUnreadable, secretBoxWith } from "../../src/platform/Secrets.ts"

describe("SecretBox (AES-256-GCM at rest)", () => {
  const box = secretBoxWith("installation secret")

  it("opens what it sealed, and never writes the plaintext or the same ciphertext twice", () => {
    const first = box.seal("-----BEGIN PRIVATE KEY-----", "dom_1")
    const second = box.seal("-----BEGIN PRIVATE KEY-----", "dom_1")
    expect(first).not.toContain("PRIVATE")
    expect(first).not.toBe(second)
    expect(box.open(first, "dom_1")).toBe("-----BEGIN PRIVATE KEY-----")
  })

  it("refuses a value moved to another row, altered, or sealed under another key", () => {
    const sealed = box.seal("password", "mbx_1")
    expect(() => box.open(sealed, "mbx_2")).toThrow(SealedValueUnreadable)
    const parts = sealed.split(".")
    const flipped = Buffer.from(parts[3]!, "base64url")
    flipped[0] = flipped[0]! ^ 1
    expect(() => box.open([...parts.slice(0, 3), flipped.toString("base64url")].join("."), "mbx_1")).toThrow(SealedValueUnreadable)
    expect(() => secretBoxWith("another secret").open(sealed, "mbx_1")).toThrow(SealedValueUnreadable)
    expect(() => box.open("plain text", "mbx_1")).toThrow(SealedValueUnreadable)
  })
})
