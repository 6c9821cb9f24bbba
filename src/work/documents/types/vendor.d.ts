// Type declarations for libraries that ship none.

declare module "@joplin/turndown-plugin-gfm" {
  import type TurndownService from "turndown"
  /** Tables, strikethrough and task lists, as GitHub-flavoured Markdown. */
  export const gfm: TurndownService.Plugin
}

declare module "@mixmark-io/domino" {
  /** The part of the DOM the converter walks. */
  export interface DomNode {
    readonly nodeType: number
    readonly tagName: string
    readonly firstChild: DomNode | null
    readonly nextSibling: DomNode | null
    readonly children: ArrayLike<DomNode>
    readonly childNodes: ArrayLike<DomNode>
    readonly parentNode: DomNode | null
    textContent: string | null
    getAttribute(name: string): string | null
    /** Undefined (not null) when nothing matches, unlike browsers. */
    querySelector(selector: string): DomNode | undefined
    querySelectorAll(selector: string): ArrayLike<DomNode>
    removeChild(child: DomNode): DomNode
    appendChild(child: DomNode): DomNode
    replaceChild(replacement: DomNode, child: DomNode): DomNode
  }
  export interface DomDocument {
    readonly documentElement: DomNode
    readonly body: DomNode | null
    querySelectorAll(selector: string): ArrayLike<DomNode>
    createElement(tagName: string): DomNode
    createTextNode(text: string): DomNode
  }
  /** An HTML document parsed the way browsers parse (no scripts run, nothing is loaded). */
  export function createDocument(html: string): DomDocument
}
