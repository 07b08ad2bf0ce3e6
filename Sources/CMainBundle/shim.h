#ifndef OPENSTOREKIT_CMAINBUNDLE_SHIM_H
#define OPENSTOREKIT_CMAINBUNDLE_SHIM_H
// Foundation on Linux reads the main bundle's identifier from an Info.plist beside the executable,
// and apps run without one, so `Bundle.main.bundleIdentifier` is nil where store code expects the
// app's. CoreFoundation (inside libFoundation, which every Swift program on Linux links) keeps the
// main bundle's info in a mutable dictionary: these are its functions, declared under names of our
// own (bound to CoreFoundation's symbols) so they never meet CoreFoundation's own declarations.

extern const void *osk_CFBundleGetMainBundle(void) __asm__("CFBundleGetMainBundle");
extern void *osk_CFBundleGetInfoDictionary(const void *bundle) __asm__("CFBundleGetInfoDictionary");
extern long osk_CFDictionaryGetCount(const void *dictionary) __asm__("CFDictionaryGetCount");
extern const void *osk_CFDictionaryGetValue(const void *dictionary, const void *key) __asm__("CFDictionaryGetValue");
extern void osk_CFDictionarySetValue(void *dictionary, const void *key, const void *value) __asm__("CFDictionarySetValue");
extern const void *osk_CFStringCreateWithCString(const void *allocator, const char *text, unsigned int encoding) __asm__("CFStringCreateWithCString");
extern void osk_CFRelease(const void *object) __asm__("CFRelease");

/// Names the main bundle's identifier when the process has no Info.plist at all (the dictionary
/// CoreFoundation made for it is empty, and mutable); returns 1 when it did, 0 when the bundle has
/// an info dictionary of its own, which is left as it is.
static inline int osk_main_bundle_adopt_identifier(const char *identifier) {
    const void *bundle = osk_CFBundleGetMainBundle();
    if (!bundle) return 0;
    void *info = osk_CFBundleGetInfoDictionary(bundle);
    if (!info || osk_CFDictionaryGetCount(info) != 0) return 0;
    const unsigned int utf8 = 0x08000100;
    const void *key = osk_CFStringCreateWithCString(0, "CFBundleIdentifier", utf8);
    const void *value = osk_CFStringCreateWithCString(0, identifier, utf8);
    if (!key || !value) {
        if (key) osk_CFRelease(key);
        if (value) osk_CFRelease(value);
        return 0;
    }
    osk_CFDictionarySetValue(info, key, value);
    osk_CFRelease(value);
    osk_CFRelease(key);
    return 1;
}
#endif
