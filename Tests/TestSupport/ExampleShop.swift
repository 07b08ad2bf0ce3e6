import Foundation

/// The example shop every suite buys from (`Examples/Shop.storekit`): its file and its identifiers.
///
/// Groups: `plus` 21000001 (premium yearly L1, premium monthly L1, standard monthly L2, basic weekly
/// L3) and `news` 21000002 (news plus L1, news lite L2).
public enum ExampleShop {
    public static let file = SharedTestData.packageRoot.appendingPathComponent("Examples/Shop.storekit")

    public static let plus = "21000001"
    public static let news = "21000002"

    public static let gems = "com.example.shop.gems.small"
    public static let gemChest = "com.example.shop.gems.chest"
    public static let potion = "com.example.shop.potion"
    public static let pro = "com.example.shop.pro"
    public static let wizard = "com.example.shop.character.wizard"
    public static let seasonPass = "com.example.shop.seasonpass"
    public static let premiumYearly = "com.example.shop.plus.premium.yearly"
    public static let premiumMonthly = "com.example.shop.plus.premium.monthly"
    public static let standardMonthly = "com.example.shop.plus.standard.monthly"
    public static let basicWeekly = "com.example.shop.plus.basic.weekly"
    public static let newsPlus = "com.example.shop.news.plus"
    public static let newsLite = "com.example.shop.news.lite"
}
