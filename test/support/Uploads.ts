/** A file to upload in a multipart form: its name, bytes and declared content type. */
export interface Upload {
  readonly name: string
  readonly bytes: string | Uint8Array
  readonly type?: string
}

/** A multipart form with each upload as a part named `files`, plus plain fields. */
export const uploadForm = (files: ReadonlyArray<Upload>, fields: Record<string, string> = {}) => {
  const form = new FormData()
  for (const file of files) {
    const bytes = typeof file.bytes === "string" ? new TextEncoder().encode(file.bytes) : file.bytes
    form.append("files", new Blob([new Uint8Array(bytes)], { type: file.type ?? "application/octet-stream" }), file.name)
  }
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  return form
}
