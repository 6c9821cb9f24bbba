import { useEffect, useState } from "preact/hooks"
import { call, type Credentials, type DocumentRecord, type Found, get, type Page, upload } from "../api.ts"
import { date, Loaded, RowAction, Section, useAction, useLoad } from "../ui.tsx"

/** How often the list is read again while a document is still being indexed. */
const indexingPollMs = 1_500

const modes = { hybrid: "Hybrid (keyword and meaning)", keyword: "Keyword", semantic: "Semantic (meaning)" } as const

/** A highlight as the API marks it (`ts_headline`: matches between `**`), the matches shown marked. */
const Highlight = (props: { text: string }) => (
  <>{props.text.split("**").map((part, index) => (index % 2 === 1 ? <mark>{part}</mark> : part))}</>
)

/** Files sent as the multipart form of `POST /documents`, converted and indexed by the service. */
const UploadForm = (props: { credentials: Credentials; onUploaded: () => void }) => {
  const [added, setAdded] = useState<ReadonlyArray<DocumentRecord>>()
  const { run, Failure } = useAction()
  const submit = (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const fields = new FormData(form)
    for (const name of ["title", "tags"]) if (String(fields.get(name)).trim() === "") fields.delete(name)
    run(() => upload<{ documents: ReadonlyArray<DocumentRecord> }>(props.credentials, "/documents", fields).then((answer) => {
      setAdded(answer.documents)
      form.reset()
      props.onUploaded()
    }))
  }
  return (
    <Section title="Upload">
      <form onSubmit={submit}>
        <label>Files (PDF, Word, Excel, PowerPoint, HTML, CSV, JSON, Markdown, text)<input name="files" type="file" multiple required /></label>
        <div class="row">
          <label>Title (one file only; else each file's name)<input name="title" maxLength={500} /></label>
          <label>Tags (comma separated)<input name="tags" maxLength={5000} /></label>
        </div>
        <button type="submit">Upload</button>
      </form>
      <Failure />
      {added !== undefined && <p role="status">Added {added.map((document) => `“${document.title}”`).join(", ")}.</p>}
    </Section>
  )
}

const Search = (props: { credentials: Credentials }) => {
  const [results, setResults] = useState<{ query: string; mode: string; found: ReadonlyArray<Found> }>()
  const { run, Failure } = useAction()
  const submit = (event: SubmitEvent) => {
    event.preventDefault()
    const fields = new FormData(event.currentTarget as HTMLFormElement)
    const body = { query: String(fields.get("query")), mode: String(fields.get("mode")), limit: 10 }
    run(() => call<{ results: ReadonlyArray<Found> }>(props.credentials, "POST", "/documents/search", body).then((answer) =>
      setResults({ query: body.query, mode: body.mode, found: answer.results })))
  }
  return (
    <Section title="Search">
      <form class="inline" role="search" onSubmit={submit}>
        <label>Search documents<input name="query" type="search" required maxLength={2000} /></label>
        <label>Mode
          <select name="mode">{Object.entries(modes).map(([value, label]) => <option value={value}>{label}</option>)}</select>
        </label>
        <button type="submit">Search</button>
      </form>
      <Failure />
      {results !== undefined && <p role="status">{results.found.length} found for “{results.query}” ({results.mode})</p>}
      {results !== undefined && results.found.length > 0 && (
        <ol class="results" aria-label="Search results">
          {results.found.map((result) => (
            <li>
              <strong>{result.title}</strong> <small>score {result.score.toFixed(3)}</small>
              {(result.highlights.length === 0 ? [result.content.slice(0, 300)] : result.highlights).map((text) => (
                <p class="passage"><Highlight text={text} /></p>
              ))}
            </li>
          ))}
        </ol>
      )}
    </Section>
  )
}

/** The knowledge base: files uploaded, their indexing status, and search by keyword, meaning or both. */
export const Documents = (props: { credentials: Credentials }) => {
  const { credentials } = props
  const documents = useLoad(() => get<Page<DocumentRecord>>(credentials, "/documents?pageSize=100"), [credentials])
  const { run, Failure } = useAction()
  const remove = (document: DocumentRecord) => run(() => call(credentials, "DELETE", `/documents/${document.id}`).then(documents.reload))
  const indexing = documents.value?.items.some((document) => document.status === "indexing") ?? false
  useEffect(() => {
    if (!indexing) return
    const timer = setTimeout(documents.reload, indexingPollMs)
    return () => clearTimeout(timer)
  }, [documents.value])
  return (
    <>
      <UploadForm credentials={credentials} onUploaded={documents.reload} />
      <Search credentials={credentials} />
      <Section title="Documents">
        <button type="button" class="secondary" onClick={documents.reload}>Refresh</button>
        <Failure />
        <Loaded state={documents}>
          {(page) => page.items.length === 0 ? <p>No documents yet.</p> : (
            <table>
              <thead>
                <tr><th>Title</th><th>Type</th><th>Tags</th><th>Status</th><th>Chunks</th><th>Tokens</th><th>Updated</th><th><span class="visually-hidden">Actions</span></th></tr>
              </thead>
              <tbody>
                {page.items.map((document) => (
                  <tr>
                    <td>{document.title}</td><td>{document.type}</td><td>{document.tags.join(", ")}</td>
                    <td data-testid={`status-${document.title}`} title={document.failure ?? undefined}>
                      <span class={`status ${document.status}`}>{document.status}</span>
                      {document.failure !== null && <small> — {document.failure}</small>}
                    </td>
                    <td>{document.chunkCount}</td><td>{document.tokens}</td><td>{date(document.updated)}</td>
                    <RowAction kind="danger" name={`Delete document ${document.title}`} onClick={() => remove(document)}>Delete</RowAction>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loaded>
      </Section>
    </>
  )
}
