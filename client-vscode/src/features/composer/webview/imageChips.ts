// Images for the next prompt: pasted or dropped into the composer, or picked from the
// "…" menu; each shown as a thumbnail chip with a remove button and sent with the prompt.
// Checked here as the server checks them (type and size), so a refusal is said at once.
import type { ImageRef } from "../../../shell/messages";
import { IMAGE_MIME_TYPES, MAX_IMAGE_BYTES, MAX_IMAGES } from "../../../shell/messages";
import { el } from "../../../shell/webview/shared/dom";

export interface ImageChipsOptions {
  root: HTMLElement;
  /** Why images cannot be attached now (the model takes none), or undefined. */
  refusal: () => string | undefined;
  /** A problem to show the person (too large, not an image, too many). */
  problem: (message: string) => void;
}

interface Chip extends ImageRef {
  url: string;
}

export class ImageChips {
  private chips: Chip[] = [];

  constructor(private readonly o: ImageChipsOptions) {}

  get count(): number {
    return this.chips.length;
  }

  /** Adds the image files among `files`; other files are left to whoever else takes them. */
  async add(files: Iterable<File>): Promise<void> {
    const images = [...files].filter((f) => f.type.startsWith("image/"));
    if (images.length === 0) return;
    const refusal = this.o.refusal();
    if (refusal) return this.o.problem(refusal);
    for (const file of images) {
      if (!(IMAGE_MIME_TYPES as readonly string[]).includes(file.type)) {
        this.o.problem(`${file.name || "The image"} is ${file.type}; Baton sends PNG, JPEG, GIF and WebP images.`);
        continue;
      }
      if (file.size > MAX_IMAGE_BYTES) {
        this.o.problem(`${file.name || "The image"} is ${(file.size / 1024 / 1024).toFixed(1)} MiB; images are limited to ${MAX_IMAGE_BYTES / 1024 / 1024} MiB each.`);
        continue;
      }
      if (this.chips.length >= MAX_IMAGES) {
        this.o.problem(`At most ${MAX_IMAGES} images go with one prompt.`);
        break;
      }
      const url = await readDataUrl(file);
      const data = url.slice(url.indexOf(",") + 1);
      this.chips.push({ mimeType: file.type as ImageRef["mimeType"], data, name: file.name || "pasted image", url });
    }
    this.render();
  }

  /** The images for the prompt being sent; the chips are emptied. */
  take(): ImageRef[] {
    const out = this.chips.map(({ mimeType, data, name }) => ({ mimeType, data, name }));
    this.chips = [];
    this.render();
    return out;
  }

  private render(): void {
    this.o.root.replaceChildren(
      ...this.chips.map((chip, index) => {
        const remove = el("button", { type: "button", class: "chip-remove", "aria-label": `Remove image ${chip.name}`, title: "Remove" }, "×");
        remove.addEventListener("click", () => {
          this.chips.splice(index, 1);
          this.render();
        });
        const thumb = el("img", { class: "image-thumb", src: chip.url, alt: "" });
        return el("span", { class: "chip image-chip", title: chip.name, "data-name": chip.name }, thumb, el("span", { class: "image-name" }, chip.name), remove);
      }),
    );
    this.o.root.hidden = this.chips.length === 0;
  }
}

function readDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("could not read the image"));
    reader.readAsDataURL(file);
  });
}
