/**
 * Hand-built pages for the page types the corpus has no real capture of (deals, deal products,
 * seller profile, promotion, the 404 page). Each follows the markup public scrapers document for
 * that page, trimmed to what the parser reads plus some surrounding noise. They prove the parsers
 * read that shape; they do not prove Amazon still serves it.
 */

const head = (title: string, canonical = "") =>
  `<!doctype html><html lang="en-us"><head><meta charset="utf-8"><title>${title}</title>${
    canonical ? `<link rel="canonical" href="${canonical}">` : ""
  }</head><body><div id="navbar"><a href="/ap/signin?openid.return_to=x">Hello, sign in</a>` +
  `<a href="/gp/goldbox?ref_=nav_cs_gb">Today's Deals</a></div>`;

/** /deals grid: a single-product deal, a multi-product deal and a card without price. */
export const DEALS_PAGE = head("Amazon.com - Today's Deals") + `
<div id="grid-main-container"><div data-testid="grid-deals-container" class="Grid-module__gridDisplayGrid_2X7cu">
 <div data-testid="deal-card" data-deal-id="a1b2c3d4" class="DealCard-module__card_1u9yK">
  <a class="a-link-normal" href="/Echo-Dot-5th-Gen/dp/B09B8V1LZ3/ref=gbps_img_s-3_a1b2?smid=ATVPDKIKX0DER">
   <img class="DealImage-module__imageObjectFit_1G4pE" src="https://m.media-amazon.com/images/I/71xoR4A6q-L._AC_UL320_.jpg" alt="Echo Dot">
  </a>
  <div class="BadgeAutomated-module__badgeOneLineContainer_yYupg">
   <span class="a-size-mini">22% off</span>
   <span class="a-size-mini BadgeAutomatedLabel-module__badgeAutomatedLabel_2Teem">Limited time deal</span>
  </div>
  <div class="a-row"><span class="a-price" data-a-color="base"><span class="a-offscreen">$38.99</span><span aria-hidden="true">$38<sup>99</sup></span></span>
   <span class="a-size-mini a-color-secondary">List: <span class="a-price a-text-price"><span class="a-offscreen">$49.99</span></span></span></div>
  <div class="DealContent-module__truncate_sWbxETx42ZPStTc9jwySW">Echo Dot (5th Gen) smart speaker with Alexa</div>
 </div>
 <div data-testid="deal-card" data-deal-id="e5f6a7b8" class="DealCard-module__card_1u9yK">
  <a class="a-link-normal" href="/deal/e5f6a7b8?showVariations=true&amp;ref=gbps_img_s-3_e5f6">
   <img src="https://m.media-amazon.com/images/I/81wYzPhzSSL._AC_UL320_.jpg" alt="">
  </a>
  <div class="BadgeAutomated-module__badgeOneLineContainer_yYupg"><span class="a-size-mini">Up to 40% off</span>
   <span class="a-size-mini BadgeAutomatedLabel-module__badgeAutomatedLabel_2Teem">Deal of the Day</span></div>
  <div class="a-row"><span class="a-price"><span class="a-offscreen">$12.74</span></span> – <span class="a-price"><span class="a-offscreen">$29.99</span></span></div>
  <div class="DealContent-module__truncate_sWbxETx42ZPStTc9jwySW">Save on kitchen storage</div>
 </div>
 <div data-testid="deal-card" class="DealCard-module__card_1u9yK" data-asin="B0C1H26C46">
  <a class="a-link-normal" href="/dp/B0C1H26C46"><img src="https://m.media-amazon.com/images/I/61k.jpg" alt=""></a>
  <div><span class="a-size-mini">-15%</span></div>
 </div>
</div></div></body></html>`;

/** /deal/<id> landing page with two products (one without a strike-through price). */
export const DEAL_PRODUCTS_PAGE =
  head("Amazon.com: Save on kitchen storage", "https://www.amazon.com/deal/e5f6a7b8") + `
<div id="octopus-dlp-header"><h1>Save on kitchen storage</h1></div>
<div id="octopus-dlp-asin-stream"><ul class="a-unordered-list a-nostyle a-horizontal a-spacing-none">
 <li class="a-spacing-none"><span class="a-list-item"><div class="a-section octopus-dlp-asin-section" data-asin="B07QXV6N1B">
  <div class="a-section a-spacing-base"><a class="a-link-normal" href="/Rubbermaid-Brilliance-Food-Storage/dp/B07QXV6N1B/ref=dlp_e5f6_1">
   <img class="octopus-dlp-asin-image" src="https://m.media-amazon.com/images/I/81wYzPhzSSL._AC_SY200_.jpg"></a></div>
  <div class="a-section octopus-dlp-asin-title"><a class="a-size-base a-link-normal a-color-base a-text-normal" href="/dp/B07QXV6N1B">Rubbermaid Brilliance Food Storage Containers, 10-Piece Set</a></div>
  <div class="a-icon-row"><i class="a-icon a-icon-star-mini a-star-mini-4-5"><span class="a-icon-alt">4.7 out of 5 stars</span></i> <span class="a-size-mini">48,106</span></div>
  <div class="a-row"><span class="a-price octopus-widget-price"><span class="a-offscreen">$29.99</span></span>
   <span class="a-size-mini a-color-tertiary octopus-widget-strike-through-price a-text-strike">$49.99</span>
   <span class="a-size-medium a-color-price octopus-widget-saving-percentage">Save 40%</span></div>
 </div></span></li>
 <li class="a-spacing-none"><span class="a-list-item"><div class="a-section octopus-dlp-asin-section" data-asin="B08KH5CQ1P">
  <a class="a-link-normal" href="/dp/B08KH5CQ1P"><img class="octopus-dlp-asin-image" src="https://m.media-amazon.com/images/I/71abc._AC_SY200_.jpg"></a>
  <div class="a-section octopus-dlp-asin-title"><a class="a-link-normal a-text-normal" href="/dp/B08KH5CQ1P">OXO Good Grips POP Container</a></div>
  <div class="a-row"><span class="a-price octopus-widget-price"><span class="a-offscreen">$12.74</span></span></div>
 </div></span></li>
</ul></div></body></html>`;

/** /sp?seller=A1EXAMPLE7SELLER, layout of 2023–2025 seller profiles. */
export const SELLER_PROFILE_PAGE = head("Amazon.com Seller Profile: ACME Direct") + `
<div id="seller-profile-container" class="a-section">
 <div class="a-row"><div id="seller-logo-column" class="a-column a-span2"><img class="seller-logo-img" src="https://m.media-amazon.com/images/S/seller-logo/acme.png" alt="ACME Direct"></div>
  <div class="a-column a-span10"><h1 id="seller-name">ACME Direct</h1>
   <div id="seller-info-storefront-link"><a href="/s?me=A1EXAMPLE7SELLER&amp;marketplaceID=ATVPDKIKX0DER">Visit the ACME Direct storefront</a></div>
   <div id="seller-info-feedback-summary"><span class="a-declarative"><a href="#"><i class="a-icon a-icon-star a-star-4-5 feedback-detail-stars"><span class="a-icon-alt">4.5 out of 5 stars</span></i></a></span>
    <span class="a-size-base feedback-detail-description"><a href="#"><b>93% positive</b></a> in the last 12 months (1,234 ratings)</span></div>
  </div></div>
 <div id="page-section-about-seller" class="a-section"><h3>About Seller</h3>
  <div id="spp-expander-about-seller"><div class="spp-expander-less-content">ACME Direct sells hardware…</div>
   <div class="spp-expander-more-content">ACME Direct sells hardware and tools. We ship within one business day.</div></div></div>
 <div id="page-section-detail-seller-info" class="a-section"><div class="a-box"><div class="a-box-inner">
  <h3>Detailed Seller Information</h3>
  <div class="a-row a-spacing-none"><span class="a-text-bold">Business Name:</span><span>ACME Direct LLC</span></div>
  <div class="a-row a-spacing-none"><span class="a-text-bold">Business Address:</span></div>
  <div class="a-row a-spacing-none indent-left"><span>100 Main Street</span></div>
  <div class="a-row a-spacing-none indent-left"><span>Springfield</span></div>
  <div class="a-row a-spacing-none indent-left"><span>IL</span></div>
  <div class="a-row a-spacing-none indent-left"><span>US</span></div>
 </div></div></div>
</div></body></html>`;

/** /promotion/psp/A2P3X1AN29HWHX with a schedule range and three product tiles. */
export const PROMOTION_PAGE =
  head("Amazon.com: Promotion", "https://www.amazon.com/promotion/psp/A2P3X1AN29HWHX") + `
<div id="promotionTitle" class="a-section"><h1><span>Save 20% on select kitchen items</span></h1></div>
<div id="promotionSchedule" class="a-section"><span>From Friday October 24, 2025 12:00 AM PDT to Friday October 31, 2025</span></div>
<div id="promotionTerms" class="a-section"><span>Discount applies at checkout. Offer valid while supplies last.</span></div>
<ul id="productInfoList" class="a-unordered-list">
 <li class="productGrid" data-asin="B07QXV6N1B"><a href="/dp/B07QXV6N1B">Rubbermaid Brilliance</a></li>
 <li class="productGrid" data-asin="B08KH5CQ1P"><a href="/dp/B08KH5CQ1P">OXO Good Grips</a></li>
 <li class="productGrid" data-asin="B07QXV6N1B"><a href="/dp/B07QXV6N1B">Rubbermaid Brilliance (again)</a></li>
 <li class="productGrid" data-asin=""></li>
</ul></body></html>`;

/** The dogs-of-Amazon 404 page, as the 503 capture in the corpus but with the 404 wording. */
export const NOT_FOUND_PAGE = `<!DOCTYPE html><html><head><title>Page Not Found</title></head><body>
<a href="/ref=cs_404_logo"><img src="https://images-na.ssl-images-amazon.com/images/G/01/error/logo._TTD_.png" alt="Amazon.com"></a>
<div id="g"><div><a href="/ref=cs_404_link"><img src="https://images-na.ssl-images-amazon.com/images/G/01/error/title._TTD_.png" alt="Sorry! We couldn't find that page. Try searching or go to Amazon's home page."></a></div>
<a href="/dogsofamazon/ref=cs_404_d"><img id="d" alt="Dogs of Amazon"></a></div></body></html>`;
