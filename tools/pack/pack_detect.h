/* The inputs of `sluice pack --coco` and `--voc`: detection datasets whose
 * images carry boxes (sl_pack_item.boxes), read with Debian's libcjson
 * (COCO's instances JSON) and libexpat (Pascal VOC's XML).
 *
 * COCO: images[] {id, file_name, width, height} become the samples in the
 * file's order (path IMAGES_DIR/file_name, name file_name), label -1;
 * annotations[] {image_id, bbox [x, y, w, h], category_id, iscrowd} their
 * boxes (x, y, x + w, y + h; iscrowd 1 sets SL_BOX_CROWD), in the file's
 * order; categories[] {id, name} the classes, labels 0..C-1 in id order
 * (COCO's 1..90 with gaps become 0..79). An image without annotations has
 * 0 boxes. A damaged JSON is an error naming the file and line; an
 * annotation naming an unknown image or category, a bbox that is not four
 * finite numbers with w, h >= 0, a duplicate image or category id are
 * errors naming the annotation (index and id), image or category.
 * Memory: the file, and cJSON's tree of it (every node, segmentation
 * polygons included: about 12 times the file's size at the peak, measured
 * on an 84 MB COCO-like file), until the scan returns; then 24 bytes a
 * box.
 *
 * VOC: VOCDIR is a VOCdevkit year folder (VOC2007): Annotations/ID.xml for
 * every ID of ImageSets/Main/SPLIT.txt (split given), or every .xml in
 * Annotations/ in name order; the image is JPEGImages/ID.jpg (as
 * torchvision's VOCDetection finds it), named "JPEGImages/ID.jpg". Each
 * <object> (not its <part>s) gives a box: <name> its class, <bndbox>'s
 * 1-based inclusive pixel indices xmin..xmax, ymin..ymax become the pixel
 * edges x0 = xmin - 1, y0 = ymin - 1, x1 = xmax, y1 = ymax (the box covers
 * exactly the annotated pixels, in the coordinates COCO uses), and
 * <difficult>1</difficult> sets SL_BOX_DIFFICULT. Classes: VOC's 20 in
 * their standard order (aeroplane .. tvmonitor, which is name order) when
 * every name is one of them, so splits packed apart share labels; else
 * every name found, sorted. <size> gives the size checked against the
 * image. A damaged XML is an error naming the file and line; an object
 * without a name or a complete bndbox, or a number that does not parse,
 * names the file and the object's line.
 *
 * Both return 0, or -1 with a message in msg. `ids` gets the text the
 * writer settings record ("coco_ids=1-11,13-25,..." for COCO: label k is
 * the k-th id of these ranges; "voc_classes=standard|found" for VOC). */
#ifndef SLUICE_TOOLS_PACK_DETECT_H
#define SLUICE_TOOLS_PACK_DETECT_H

#include <stddef.h>

#include "tools/pack/pack_scan.h"

int sl_pack_scan_coco(sl_pack_inputs *in, const char *json,
                      const char *images_dir, char *ids, size_t ids_cap,
                      char *msg, size_t msg_len);
int sl_pack_scan_voc(sl_pack_inputs *in, const char *vocdir, const char *split,
                     char *ids, size_t ids_cap, char *msg, size_t msg_len);

/* Reads the whole file at path into a malloc'd, NUL-terminated buffer.
 * Returns it (size in *len), or NULL with a message. */
char *sl_pack_read_text(const char *path, size_t *len, char *msg,
                        size_t msg_len);

/* Formats a message into msg (cap bytes) and returns -1: the scanners'
 * one way to fail. */
int sl_pack_failf(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
