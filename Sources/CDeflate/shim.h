// libdeflate (Debian's libdeflate-dev): whole-buffer decompression, about twice zlib's speed on the
// small objects a verification reads from packs.
#include <libdeflate.h>
