import { parseDocument } from "htmlparser2"

/**
 * Office XML parts as a tree (htmlparser2 in XML mode: entities declared in
 * a DOCTYPE are never expanded, so no "billion laughs"), walked without
 * recursion so that deep nesting cannot overflow the stack.
 */

type XmlDocument = ReturnType<typeof parseDocument>
export type XmlNode = XmlDocument["children"][number]
export type XmlElement = Extract<XmlNode, { readonly attribs: Record<string, string> }>

export const parseXml = (text: string): XmlDocument => parseDocument(text, { xmlMode: true })

const isElement = (node: XmlNode): node is XmlElement => "attribs" in node

/** The element's child elements, those of the given name if one is given. */
export const childElements = (parent: { readonly children: ReadonlyArray<XmlNode> }, name?: string): Array<XmlElement> =>
  parent.children.filter((node): node is XmlElement => isElement(node) && (name === undefined || node.name === name))

export const firstChild = (parent: { readonly children: ReadonlyArray<XmlNode> }, name: string): XmlElement | undefined =>
  childElements(parent, name)[0]

/**
 * The descendants of the given name in document order; `stopAt` names
 * elements whose insides are not searched (a nested table, say).
 */
export const descendants = (
  root: { readonly children: ReadonlyArray<XmlNode> },
  name: string,
  stopAt: ReadonlySet<string> = new Set()
): Array<XmlElement> => {
  const found: Array<XmlElement> = []
  const stack: Array<XmlNode> = []
  const pushChildren = (children: ReadonlyArray<XmlNode>) => {
    for (let index = children.length - 1; index >= 0; index--) stack.push(children[index])
  }
  pushChildren(root.children)
  while (stack.length > 0) {
    const node = stack.pop()!
    if (!isElement(node)) continue
    if (node.name === name) found.push(node)
    if (node.name !== name && !stopAt.has(node.name)) pushChildren(node.children)
  }
  return found
}
